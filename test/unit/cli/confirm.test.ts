/**
 * Every command that starts or changes a campaign or the fleet asks through the one shared
 * confirmation: `--yes` goes ahead, a terminal asks y/N, no terminal changes nothing (exit 2).
 * Judged from the requests the stand-in Control received, not from the commands' code.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadAllGroups } from "../../../cli/main.js";
import { type FakeControl, startFakeControl } from "./fake-control.js";
import { runCli } from "./run-cli.js";

/** A command line, the RPC it makes once confirmed, and the words of its refusal. */
interface Case {
  readonly argv: readonly string[];
  readonly rpc: string;
  readonly refused: string;
  readonly verb: string;
}

const CASES: readonly Case[] = [
  {
    argv: ["campaign", "start", "--version", "1.2.0"],
    rpc: "StartCampaign",
    refused: "not started",
    verb: "start",
  },
  {
    argv: ["campaign", "retry", "c1"],
    rpc: "RetryCampaign",
    refused: "not retried",
    verb: "retry",
  },
  {
    argv: ["campaign", "abort", "c1", "--rollback"],
    rpc: "AbortCampaign",
    refused: "not aborted",
    verb: "abort",
  },
  { argv: ["campaign", "pause", "c1"], rpc: "PauseCampaign", refused: "not paused", verb: "pause" },
  {
    argv: ["campaign", "skip-gate", "c1", "1", "--reason", "prometheus is down"],
    rpc: "SkipGate",
    refused: "not skipped",
    verb: "skip it",
  },
  {
    argv: ["campaign", "resume", "c1"],
    rpc: "ResumeCampaign",
    refused: "not resumed",
    verb: "resume",
  },
  {
    argv: ["plan", "start", "--version", "1.2.0", "--groups", "dev,prod"],
    rpc: "StartPlan",
    refused: "not started",
    verb: "start",
  },
  { argv: ["plan", "abort", "p1"], rpc: "AbortPlan", refused: "not aborted", verb: "abort" },
  {
    argv: ["desired", "set", "--version", "1.2.0", "--pool", "edge"],
    rpc: "SetDesiredVersion",
    refused: "not set",
    verb: "set it",
  },
  {
    argv: ["desired", "clear", "d1"],
    rpc: "ClearDesiredVersion",
    refused: "not cleared",
    verb: "clear it",
  },
  { argv: ["node", "disable", "n1"], rpc: "DisableNode", refused: "not disabled", verb: "disable" },
  { argv: ["node", "reset", "n1"], rpc: "ResetNode", refused: "not reset", verb: "reset" },
  { argv: ["node", "revoke", "n1"], rpc: "RevokeNode", refused: "not revoked", verb: "revoke" },
  {
    argv: ["release", "yank", "1.2.0", "--reason", "corrupts the cache"],
    rpc: "YankRelease",
    refused: "not yanked",
    verb: "yank",
  },
  {
    argv: ["release", "prune", "--keep", "3"],
    rpc: "PruneReleases",
    refused: "nothing pruned",
    verb: "prune",
  },
];

let fake: FakeControl;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeControl();
  env = { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: "operator-token" };
});

beforeEach(() => {
  fake.state.calls = [];
});

afterAll(async () => {
  await fake.stop();
});

/** True when `rpc` reached the server: it answered it, or said it does not offer it. */
function reached(rpc: string, stderr: string): boolean {
  return fake.state.calls.some((c) => c.method === rpc) || stderr.includes(`does not offer ${rpc}`);
}

describe("confirmation of every command that changes a campaign or the fleet", () => {
  it.each(CASES)(
    "$argv without a terminal and without --yes: exit 2, one line, no request",
    async (c) => {
      const result = await runCli([...c.argv], { env, stdin: "" });
      expect(result).toEqual({
        code: 2,
        stdout: "",
        stderr: `agentctl: ${c.refused}: no terminal to confirm on; pass --yes to ${c.verb} without confirmation\n`,
      });
      expect(fake.state.calls).toEqual([]);
    },
  );

  it.each(CASES)(
    "$argv on a terminal answered n: exit 1, asked once, nothing changed",
    async (c) => {
      const result = await runCli([...c.argv], { env, tty: true, stdin: "n\n" });
      expect(result.code).toBe(1);
      expect(result.stderr.match(/\[y\/N\] /g)).toHaveLength(1);
      expect(result.stderr.endsWith(`agentctl: ${c.refused}: not confirmed\n`)).toBe(true);
      expect(reached(c.rpc, result.stderr)).toBe(false);
    },
  );

  it.each(CASES)("$argv on a terminal answered y: the request is made", async (c) => {
    const result = await runCli([...c.argv], { env, tty: true, stdin: "y\n" });
    expect(result.stderr).toContain("[y/N] ");
    expect(reached(c.rpc, result.stderr)).toBe(true);
  });

  it.each(CASES)(
    "$argv --yes without a terminal: nothing asked, the request is made",
    async (c) => {
      const result = await runCli([...c.argv, "--yes"], { env, stdin: "" });
      expect(result.stderr).not.toContain("[y/N]");
      expect(result.stderr).not.toContain("no terminal to confirm on");
      expect(reached(c.rpc, result.stderr)).toBe(true);
      const short = await runCli([...c.argv, "-y"], { env, stdin: "" });
      expect(short.stderr).not.toContain("no terminal to confirm on");
    },
  );

  it("a usage mistake is reported before any question", async () => {
    const result = await runCli(["desired", "set", "--version", "one"], { env, stdin: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/invalid --version "one"/);
  });

  it("every command that takes --yes is in this table, and every one in it takes --yes", async () => {
    const withYes: string[] = [];
    for (const group of await loadAllGroups()) {
      for (const [name, command] of Object.entries(group.commands)) {
        if (Object.hasOwn(command.flags, "yes")) withYes.push(`${group.name} ${name}`);
      }
    }
    const listed = [...new Set(CASES.map((c) => `${c.argv[0]} ${c.argv[1]}`))];
    expect(withYes.sort()).toEqual(listed.sort());
  });
});
