/**
 * The world of the printed-commands tests (`printed-commands-*.test.ts`): each runs the
 * `agentctl` commands of some sections of docs/operator-guide.md as printed, typed into a real
 * shell on a terminal (a pseudo-terminal from `script`, the operator answering y where a
 * command asks), with `agentctl` and `npx agentctl` on the PATH, against a real Control with
 * simulated agents. Only placeholders (`<id>`, `<alice>`, a made-up plan id, a node name) are
 * replaced by the test's own. Steps a reader does between the printed commands are done out
 * of sight ({@link GuideWorld.quietly}). Every section that prints a command is named in
 * {@link GUIDE_SECTIONS} by the file that runs it, so a command added to the guide fails a
 * test until it is run too.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect } from "vitest";
import { runAgentctl } from "../../agent-sim/demo/agentctl.js";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import type { ConfigInput } from "../../control/config-reader.js";
import { startTestControl, type TestControl } from "../helpers/control.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "cli", "bin", "agentctl.js");

/** The guide's sections that print commands, by the test file that runs them. */
export const GUIDE_SECTIONS = {
  enrolling: ["2. Enrolling nodes"],
  releases: ["3. Signing and registering a release"],
  campaigns: [
    "4. Choosing batches and thresholds",
    "5. Reading a campaign",
    "Desired versions: late and missed nodes converge",
    "Rollout plans: dev, staging, prod in order",
  ],
} as const;

/**
 * The agentctl commands of the guide's code blocks by `##` section, as one line each: a line
 * ending in `\` joined with the next, runs of spaces made one, a trailing `# comment` left out.
 */
export function guideCommands(markdown: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let section = "";
  let inBlock = false;
  let pending = "";
  for (const raw of markdown.split("\n")) {
    if (!inBlock && raw.startsWith("## ")) section = raw.slice(3).trim();
    if (raw.trimStart().startsWith("```")) {
      inBlock = !inBlock;
      pending = "";
      continue;
    }
    if (!inBlock) continue;
    const line = pending === "" ? raw.trim() : `${pending} ${raw.trim()}`;
    if (line.endsWith("\\")) {
      pending = line.slice(0, -1).trim();
      continue;
    }
    pending = "";
    if (/^(npx )?agentctl /.test(line)) {
      const list = sections.get(section) ?? [];
      list.push(normalize(line));
      sections.set(section, list);
    }
  }
  return sections;
}

function normalize(line: string): string {
  return line
    .replace(/\s+#\s.*$/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** The guide's commands by section, read from docs/operator-guide.md. */
export async function readGuide(): Promise<Map<string, string[]>> {
  return guideCommands(await readFile(join(ROOT, "docs", "operator-guide.md"), "utf8"));
}

/** One command's exit code and what it printed on the terminal. */
export interface Typed {
  readonly code: number;
  readonly output: string;
}

/** A work directory with agentctl on the PATH, and the ways to type into it. */
export interface GuideWorld {
  /** The reader's working directory (removed by {@link GuideWorld.cleanup}). */
  readonly work: string;
  /** The environment every command runs in. */
  env: Record<string, string>;
  /** Types `line` into bash on a terminal, answering y to a question; resolves at its exit. */
  type(line: string): Promise<Typed>;
  /**
   * Runs the printed `command` (it must be in one of this world's sections), placeholders
   * replaced by `subs`; expects exit 0.
   */
  guide(command: string, subs?: Record<string, string>): Promise<Typed>;
  /** A step of the reader's own, not printed: agentctl without a terminal; expects exit 0. */
  quietly(args: string[]): Promise<string>;
  /** The commands of this world's sections that {@link GuideWorld.guide} did not run. */
  notRun(): string[];
  /** Registers a step for {@link GuideWorld.cleanup} (run in reverse order). */
  onCleanup(step: () => Promise<void>): void;
  cleanup(): Promise<void>;
}

/** Creates a {@link GuideWorld} for the guide's `sections`. */
export async function createGuideWorld(sections: readonly string[]): Promise<GuideWorld> {
  const guideSections = await readGuide();
  const printed = sections.flatMap((s) => guideSections.get(s) ?? []);
  expect(printed.length, `the guide prints commands in ${sections.join(", ")}`).toBeGreaterThan(
    sections.length,
  );
  const ran = new Set<string>();
  const cleanups: (() => Promise<void>)[] = [];
  const work = await mkdtemp(join(tmpdir(), "agent-control-guide-"));
  cleanups.push(() => rm(work, { recursive: true, force: true }));
  const bin = join(work, ".bin");
  await mkdir(bin);
  await writeFile(join(bin, "agentctl"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await writeFile(
    join(bin, "npx"),
    `#!/bin/sh\n[ "$1" = agentctl ] || { echo "npx: only agentctl here" >&2; exit 127; }\nshift\nexec agentctl "$@"\n`,
  );
  await Promise.all(["agentctl", "npx"].map((f) => chmod(join(bin, f), 0o755)));

  const world: GuideWorld = {
    work,
    env: {
      PATH: `${bin}:/usr/bin:/bin`,
      HOME: work,
      SHELL: "/bin/bash",
      TERM: "dumb",
      NO_COLOR: "1",
    },
    type: (line) =>
      new Promise((resolveTyped) => {
        const child = spawn("script", ["-qefc", line, "/dev/null"], { cwd: work, env: world.env });
        let output = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          output += chunk;
        });
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          output += chunk;
        });
        child.stdin.write("y\n");
        const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
        child.once("close", (code) => {
          clearTimeout(timer);
          child.stdin.destroy();
          resolveTyped({ code: code ?? 1, output: output.replace(/\r/g, "") });
        });
      }),
    async guide(command, subs = {}) {
      expect(printed, `the guide prints ${command}`).toContain(command);
      ran.add(command);
      let line = command;
      for (const [from, to] of Object.entries(subs)) line = line.split(from).join(to);
      const typed = await world.type(line);
      expect(typed.code, `${line}\n${typed.output}`).toBe(0);
      return typed;
    },
    async quietly(args) {
      const result = await runAgentctl(args, { env: world.env, cwd: work, timeoutMs: 60_000 });
      expect(result.code, `agentctl ${args.join(" ")}: ${result.stderr}`).toBe(0);
      return result.stdout;
    },
    notRun: () => printed.filter((c) => !ran.has(c)),
    onCleanup: (step) => {
      cleanups.push(step);
    },
    async cleanup() {
      for (const step of cleanups.reverse()) await step();
      cleanups.length = 0;
    },
  };
  return world;
}

/** A new signing key in the work directory, out of sight; resolves to its pin. */
export async function keygen(world: GuideWorld, file: string): Promise<string> {
  return (
    JSON.parse(await world.quietly(["release", "keygen", "--out", file, "--json"])) as {
      pin: string;
    }
  ).pin;
}

/** The simulated agent binary every release of these tests ships. */
export async function writeAgentBinary(world: GuideWorld): Promise<void> {
  await mkdir(join(world.work, "dist"), { recursive: true });
  await writeFile(join(world.work, "dist", "agent-linux-amd64"), "simulated agent binary");
}

/** The guide's `health.json` (two checks) in the work directory. */
export async function writeGuideHealthChecks(world: GuideWorld): Promise<void> {
  await writeFile(
    join(world.work, "health.json"),
    JSON.stringify({
      checks: [
        { kind: "http", name: "local-api", port: 8080, path: "/healthz", timeoutSeconds: 5 },
        {
          kind: "command",
          name: "workload",
          command: "/usr/local/bin/workload-probe",
          args: ["--quick"],
          timeoutSeconds: 10,
          exitCode: 0,
        },
      ],
      periodSeconds: 60,
      intervalSeconds: 10,
    }),
  );
}

/**
 * Makes, signs with alice.key and bob.key, and registers release `version` out of sight
 * (`extra`: more `release manifest` flags).
 */
export async function registerRelease(
  world: GuideWorld,
  version: string,
  sequence: number,
  extra: string[] = [],
): Promise<void> {
  const manifest = `m-${version}.json`;
  const release = `r-${version}.json`;
  await world.quietly([
    "release",
    "manifest",
    "--version",
    version,
    "--sequence",
    String(sequence),
    "--artifact",
    "linux-amd64=dist/agent-linux-amd64",
    ...extra,
    "--out",
    manifest,
  ]);
  await world.quietly([
    "release",
    "sign",
    "--key",
    "alice.key",
    "--in",
    manifest,
    "--out",
    release,
  ]);
  await world.quietly(["release", "sign", "--key", "bob.key", "--in", release, "--out", release]);
  await world.quietly(["release", "register", release, "--artifacts", "dist/"]);
}

/** Control and its simulated fleets, as the guide's reader has them. */
export interface GuideControl {
  readonly tc: TestControl;
  readonly fleets: readonly Fleet[];
}

/**
 * Starts a Control trusting `pins` (threshold 2) with fast campaigns, points the world's
 * agentctl at it, and starts the fleets `fleets` (each online before this resolves): six
 * `web` nodes in pool prod, one `legacy` (config.v1 only) and one `spare`, unless told.
 */
export async function startGuideControl(
  world: GuideWorld,
  pins: readonly string[],
  fleets: readonly (Partial<Parameters<typeof startFleet>[0]> & { count: number })[] = [
    { count: 6, idPrefix: "web", labels: { pool: "prod" } },
    { count: 1, idPrefix: "legacy", labels: { pool: "legacy" }, capabilities: ["config.v1"] },
    { count: 1, idPrefix: "spare", labels: { pool: "spare" } },
  ],
): Promise<GuideControl> {
  const config: ConfigInput = {
    release: { pins: [...pins], threshold: 2 },
    policy: { minBatchDurationSeconds: 0 },
    worker: { intervalMs: 100 },
    timeouts: { heartbeatSeconds: 0.2, reconnectSeconds: 30, configGraceSeconds: 0 },
  };
  const tc = await startTestControl({ config });
  world.onCleanup(() => tc.stop());
  world.env = { ...world.env, AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken };
  const joinToken = await tc.joinToken();
  const started: Fleet[] = [];
  world.onCleanup(async () => {
    await Promise.all(started.map((f) => f.stop()));
  });
  for (const options of fleets) {
    started.push(
      await startFleet({
        server: tc.agentAddress,
        joinToken,
        pins: [...pins],
        threshold: 2,
        restartMs: [1500, 2500],
        ...options,
      }),
    );
  }
  for (const [i, f] of started.entries()) {
    const size = fleets[i]?.count ?? 0;
    await f.waitUntil((x) => x.welcomedCount() === size, 20_000, "the fleet online");
  }
  return { tc, fleets: started };
}
