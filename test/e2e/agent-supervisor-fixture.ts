/**
 * What the end-to-end tests of supervisor updates share: a release that carries its
 * supervisor (the signed manifest's `supervisor: true`), `agent status`'s supervisor
 * object, and the processes running from an install directory's supervisors (read from
 * /proc: the executable, else the command line).
 */
import { readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { makeRelease } from "../helpers/releases.js";
import type { CampaignFixture } from "../integration/campaign-fixture.js";
import { PLATFORM } from "./agent-campaign-fixture.js";
import { agentStatus, type RunningAgent } from "./agent-fixture.js";

/**
 * Registers a release of `version` at `sequence` whose signed manifest says it carries its
 * supervisor, signed by the fixture's key, with `content` as its artifact.
 */
export async function registerSupervisorRelease(
  fx: CampaignFixture,
  version: string,
  sequence: number,
  content: Uint8Array,
): Promise<void> {
  const release = await makeRelease({
    version,
    sequence,
    keys: [fx.key],
    platforms: [PLATFORM],
    content: () => content,
    rawManifest: (m) => ({ ...m, supervisor: true }),
  });
  await fx.tc.client(ReleaseService).registerRelease({
    envelope: release.envelope,
    artifacts: [...release.files].map(([platform, bytes]) => ({ platform, content: bytes })),
  });
}

/** `agent status`'s `supervisor` object. */
export interface SupervisorStatusJson {
  /** The supervisor the pointer names (null: the one installed by hand). */
  inUse: string | null;
  previous: string | null;
  trial: { version: string; opId: string; from: string } | null;
  failure: { version: string; opId: string; code: string; message: string } | null;
  installed: string[];
}

/** `agent status`'s `supervisor` object of `dir`. */
export async function supervisorStatus(
  artifact: string,
  dir: string,
  env?: NodeJS.ProcessEnv,
): Promise<SupervisorStatusJson> {
  const status = (await agentStatus(artifact, dir, env)) as unknown as {
    supervisor: SupervisorStatusJson;
  };
  return status.supervisor;
}

/** One running process: its pid, executable and command line. */
export interface ProcessInfo {
  readonly pid: number;
  readonly exe: string;
  readonly args: readonly string[];
}

/** The processes whose executable or command line names a file under `prefix`. */
export async function processesUnder(prefix: string): Promise<ProcessInfo[]> {
  const found: ProcessInfo[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const exe = await readlink(join("/proc", name, "exe")).catch(() => "");
      const args = (await readFile(join("/proc", name, "cmdline"), "utf8")).split("\0");
      if (exe.startsWith(prefix) || args.some((a) => a.startsWith(prefix))) {
        found.push({ pid: Number(name), exe, args });
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Resolves once `agent`'s supervisor process has exited (killed or not). */
export function exited(agent: RunningAgent): Promise<void> {
  if (agent.process.exitCode !== null || agent.process.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => agent.process.once("exit", () => resolve()));
}
