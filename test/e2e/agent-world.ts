/**
 * The world of the end-to-end tests of real Agents driven by a real Control: a temporary
 * directory with the Agent built at each version asked for, a campaign fixture timed for real
 * processes ({@link agentCampaignFixture}), and the Agents started in it, each enrolled with
 * that Control. {@link AgentWorld.stop} stops every Agent started, then Control, and removes
 * the directory.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CampaignFixture } from "../integration/campaign-fixture.js";
import { agentCampaignFixture, enrollFlags } from "./agent-campaign-fixture.js";
import {
  agentStatus,
  buildAgent,
  type RunningAgent,
  type StatusJson,
  startAgent,
} from "./agent-fixture.js";

/** Options of {@link startAgentWorld}. */
export interface AgentWorldOptions {
  /** Prefix of the temporary directory. */
  readonly prefix: string;
  /** Versions to build; the first is the one Agents start on. */
  readonly versions: readonly string[];
  /** Single executables (`agent-<v>`) instead of `.mjs` bundles (`agent-<v>.mjs`). */
  readonly executable?: boolean;
  /** Runs once the directory exists, before the Agents are built (extra files, servers). */
  readonly prepare?: (dir: string) => Promise<void>;
}

/** Options of {@link AgentWorld.start}. */
export interface StartOptions {
  readonly nodeId: string;
  /** `--start-deadline-ms` of the supervisor. */
  readonly startDeadlineMs: number;
  /** The install directory's name in the world's directory (default `install`). */
  readonly install?: string;
  /** More `agent run` flags, after the enrollment flags. */
  readonly flags?: readonly string[];
  /** The Agent's whole environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
}

/** A running world; see the file's TSDoc. */
export interface AgentWorld {
  readonly fx: CampaignFixture;
  readonly dir: string;
  /** The bytes of the built artifact of `version`; throws for a version not built. */
  bytes(version: string): Uint8Array;
  /** The path of the built artifact of `version` (default: the first). */
  artifact(version?: string): string;
  /** The path of the install directory `name` (default `install`). */
  install(name?: string): string;
  /** Starts the first version's artifact enrolled as `nodeId`; stopped by {@link stop}. */
  start(options: StartOptions): Promise<RunningAgent>;
  /** `agent status` of the install directory `name` (default `install`). */
  status(name?: string, env?: NodeJS.ProcessEnv): Promise<StatusJson>;
  stop(): Promise<void>;
}

/** Builds the Agents, starts Control; see the file's TSDoc. */
export async function startAgentWorld(o: AgentWorldOptions): Promise<AgentWorld> {
  const dir = await mkdtemp(join(tmpdir(), o.prefix));
  await o.prepare?.(dir);
  const first = o.versions[0] ?? "1.0.0";
  const artifact = (version = first) =>
    join(dir, o.executable ? `agent-${version}` : `agent-${version}.mjs`);
  const bytes = await Promise.all(
    o.versions.map((v) => buildAgent(v, artifact(v), o.executable ?? false)),
  );
  const built = new Map(o.versions.map((v, i) => [v, bytes[i] ?? new Uint8Array()]));
  const fx = await agentCampaignFixture();
  const agents: RunningAgent[] = [];
  const install = (name = "install") => join(dir, name);
  return {
    fx,
    dir,
    bytes(version) {
      const b = built.get(version);
      if (b === undefined) throw new Error(`agent ${version} was not built`);
      return b;
    },
    artifact,
    install,
    async start(s) {
      const agent = startAgent(
        artifact(),
        install(s.install),
        [...(await enrollFlags(fx, s.nodeId, s.startDeadlineMs)), ...(s.flags ?? [])],
        s.env,
      );
      agents.push(agent);
      return agent;
    },
    status: (name, env) => agentStatus(artifact(), install(name), env),
    async stop() {
      await Promise.all(agents.map((a) => a.stop()));
      await fx.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
