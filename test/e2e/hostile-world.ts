/**
 * The world of the hostile-Control tests: a real Agent built and started against a
 * {@link HostileControl}, its download origin and another origin ({@link HostileArtifacts}),
 * a TUF repository it trusts ({@link TestTufRepo}) and the release keys it pins, with a
 * {@link Forger} over them. The Agent has sent its first Hello when {@link startHostileWorld}
 * resolves.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, type ReleaseKeyPair } from "../../control/shared/release/index.js";
import type {
  Operation,
  OperationPhase,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { TestTufRepo } from "../helpers/tuf-repo.js";
import { buildAgent, eventually, type RunningAgent, startAgent } from "./agent-fixture.js";
import { HostileArtifacts, HostileControl } from "./hostile-control.js";
import { FORGED_PLATFORM, Forger } from "./hostile-forge.js";

/** Options of {@link startHostileWorld}. */
export interface HostileWorldOptions {
  /** The join token the hostile Control accepts and the Agent enrolls with. */
  readonly join: string;
  readonly nodeId: string;
  /** Prefix of the temporary directory. */
  readonly prefix: string;
  /** Agent versions to build (`agent-<v>.mjs` in the directory); the first is started. */
  readonly versions: readonly string[];
  /** Release keys the Agent pins, all of them required (its threshold). */
  readonly keys: number;
  /** More Agent flags. */
  readonly agentFlags?: readonly string[];
}

/** A running hostile world. */
export interface HostileWorld {
  readonly dir: string;
  /** The Agent's install directory. */
  readonly install: string;
  /** The started Agent's artifact (`agent-<first version>.mjs`). */
  readonly artifact: string;
  /** The bytes of each built version. */
  readonly built: ReadonlyMap<string, Uint8Array>;
  readonly control: HostileControl;
  readonly artifacts: HostileArtifacts;
  readonly elsewhere: HostileArtifacts;
  readonly repo: TestTufRepo;
  readonly keys: ReleaseKeyPair[];
  readonly forger: Forger;
  readonly agent: RunningAgent;
  /** Sends `op` and resolves with its first report in one of the `final` phases. */
  answer(
    op: Operation,
    final: readonly OperationPhase[],
    timeoutMs: number,
  ): Promise<ReturnType<HostileControl["reports"]>[number]>;
  /** Stops the Agent and every server. */
  stop(): Promise<void>;
}

/** Builds the Agent, starts the servers and the Agent, and waits for its first Hello. */
export async function startHostileWorld(o: HostileWorldOptions): Promise<HostileWorld> {
  const dir = await mkdtemp(join(tmpdir(), o.prefix));
  const install = join(dir, "install");
  const file = (v: string) => join(dir, `agent-${v}.mjs`);
  const bytes = await Promise.all(o.versions.map((v) => buildAgent(v, file(v))));
  const built = new Map(o.versions.map((v, i) => [v, bytes[i] ?? new Uint8Array()]));
  const keys = await Promise.all(Array.from({ length: o.keys }, () => generateKeyPair()));
  const control = await new HostileControl(o.join).start();
  const artifacts = await new HostileArtifacts().start();
  const elsewhere = await new HostileArtifacts().start();
  const repo = await TestTufRepo.create();
  const forger = new Forger({ artifacts, elsewhere, repo, keys });
  const root = join(dir, "root.json");
  await writeFile(root, repo.initialRoot);
  const artifact = file(o.versions[0] ?? "1.0.0");
  const agent = startAgent(artifact, install, [
    "--server",
    control.address,
    "--join-token",
    o.join,
    "--node-id",
    o.nodeId,
    "--platform",
    FORGED_PLATFORM,
    "--pins",
    keys.map((k) => k.pin).join(","),
    "--threshold",
    String(o.keys),
    "--tuf-root",
    root,
    "--tuf-url",
    repo.base,
    "--download-origins",
    artifacts.base,
    ...(o.agentFlags ?? []),
  ]);
  await eventually(async () => control.live()?.hello, "the Agent's first Hello");
  return {
    dir,
    install,
    artifact,
    built,
    control,
    artifacts,
    elsewhere,
    repo,
    keys,
    forger,
    agent,
    answer(op, final, timeoutMs) {
      control.send(op);
      const phases = new Set(final);
      return eventually(
        async () => control.reports(op.id).find((r) => phases.has(r.phase)),
        `the Agent's answer to ${op.id}`,
        timeoutMs,
      );
    },
    async stop() {
      await agent.stop();
      control.stop();
      await artifacts.stop();
      await elsewhere.stop();
      await repo.stop();
    },
  };
}
