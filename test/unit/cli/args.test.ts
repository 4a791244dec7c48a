import { describe, expect, it } from "vitest";
import {
  formatDuration,
  parseBatches,
  parseDuration,
  parseFlags,
  parseInteger,
  parseKeyValues,
  parsePercent,
  UsageError,
} from "../../../cli/args.js";
import { specFromFlags } from "../../../cli/commands/campaign-spec.js";
import { findCommand } from "../../../cli/main.js";

describe("parseDuration", () => {
  it.each([
    ["30m", 30 * 60_000],
    ["1h30m", 90 * 60_000],
    ["45s", 45_000],
    ["720h", 720 * 3_600_000],
    ["0s", 0],
    ["1h0m5s", 3_605_000],
    ["90m", 90 * 60_000],
  ])("reads %s", (text, ms) => {
    expect(parseDuration(text, "soak")).toBe(ms);
  });

  it.each(["", "30", "1.5h", "1d", "30 m", "-5m", "m", "5m1h", "1H", "30ms"])(
    'refuses "%s" with a message naming the flag and the accepted form',
    (text) => {
      expect(() => parseDuration(text, "soak")).toThrow(
        new UsageError(
          `invalid duration "${text}" for --soak: use hours, minutes and seconds such as 30m, 1h30m, 45s or 0s`,
        ),
      );
    },
  );

  it.each([
    [0, "0s"],
    [45_000, "45s"],
    [90 * 60_000, "1h30m"],
    [720 * 3_600_000, "720h"],
    [3_605_000, "1h5s"],
  ])("formats %d ms as %s, which parses back", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text, "x")).toBe(ms);
  });
});

describe("parseBatches", () => {
  it("reads the default spec", () => {
    expect(parseBatches("5:30m,25:30m,100:30m")).toEqual([
      { percent: 5, minDurationMs: 1_800_000 },
      { percent: 25, minDurationMs: 1_800_000 },
      { percent: 100, minDurationMs: 1_800_000 },
    ]);
  });

  it("leaves the duration to the server when a step has none", () => {
    expect(parseBatches("10,100:1h")).toEqual([
      { percent: 10, minDurationMs: undefined },
      { percent: 100, minDurationMs: 3_600_000 },
    ]);
  });

  it.each([
    ["5:30m,25:30m", 'invalid --batches "5:30m,25:30m": the last batch must be 100'],
    [
      "25:30m,5:30m,100:30m",
      'invalid --batches "25:30m,5:30m,100:30m": percentages are cumulative and must increase (25 then 5)',
    ],
    ["0:30m,100:30m", 'invalid --batches "0:30m,100:30m": each percentage must be 1 to 100'],
    ["5:30m,101:30m", 'invalid --batches "5:30m,101:30m": each percentage must be 1 to 100'],
    [
      "5%:30m,100",
      'invalid --batches "5%:30m,100": expected PERCENT[:DURATION],… such as 5:30m,25:30m,100:30m',
    ],
    [
      "5:30m:1,100",
      'invalid --batches "5:30m:1,100": expected PERCENT[:DURATION],… such as 5:30m,25:30m,100:30m',
    ],
    [
      "5:half,100",
      'invalid duration "half" for --batches: use hours, minutes and seconds such as 30m, 1h30m, 45s or 0s',
    ],
  ])("refuses %s", (text, message) => {
    expect(() => parseBatches(text)).toThrow(new UsageError(message));
  });
});

describe("parseKeyValues", () => {
  it("reads repeated k=v pairs, keeping '=' inside values", () => {
    expect(parseKeyValues(["zone=a", "role=db", "expr=a=b"], "selector")).toEqual({
      zone: "a",
      role: "db",
      expr: "a=b",
    });
  });

  it.each([
    ["zone", 'invalid --selector "zone": expected key=value'],
    ["=a", 'invalid --selector "=a": expected key=value'],
  ])("refuses %s", (item, message) => {
    expect(() => parseKeyValues([item], "selector")).toThrow(new UsageError(message));
  });

  it("refuses a key given twice with different values", () => {
    expect(() => parseKeyValues(["zone=a", "zone=b"], "exclude-tag")).toThrow(
      new UsageError('--exclude-tag gives zone twice ("a" and "b")'),
    );
  });
});

describe("numbers", () => {
  it.each(["0", "5", "100"])("accepts percentage %s", (text) => {
    expect(parsePercent(text, "threshold")).toBe(Number(text));
  });

  it.each(["101", "-1", "5.5", "five", ""])("refuses percentage %s", (text) => {
    expect(() => parsePercent(text, "threshold")).toThrow(
      new UsageError(
        `invalid percentage "${text}" for --threshold: expected a whole number 0 to 100`,
      ),
    );
  });

  it("refuses an integer out of range", () => {
    expect(() => parseInteger("0", "page-size", 1, 1000)).toThrow(
      new UsageError('invalid value "0" for --page-size: expected 1 to 1000'),
    );
  });
});

describe("parseFlags", () => {
  const flags = {
    server: { type: "string", description: "" },
    json: { type: "boolean", description: "" },
    label: { type: "string", multiple: true, description: "" },
  } as const;

  it("parses values, repeated flags and positionals", () => {
    const parsed = parseFlags(["--label", "a=1", "x", "--label=b=2", "--json"], flags);
    expect(parsed.values).toMatchObject({ label: ["a=1", "b=2"], json: true });
    expect(parsed.positionals).toEqual(["x"]);
  });

  it.each([
    [["--bogus"], "unknown flag --bogus"],
    [["-x"], "unknown flag -x"],
    [["--server"], "flag --server needs a value"],
    [["--json=yes"], "flag --json does not take a value"],
    [
      ["--server", "--json"],
      'flag --server needs a value (write --server=VALUE for a value starting with "-")',
    ],
  ])("refuses %j with an exact one-line message", (argv, message) => {
    expect(() => parseFlags(argv, flags)).toThrow(new UsageError(message));
  });
});

describe("findCommand", () => {
  it("finds group and subcommand around global flags and their values", () => {
    expect(findCommand(["--server", "http://h:1", "-o", "wide", "node", "list", "--all"])).toEqual({
      words: ["node", "list"],
      rest: ["--server", "http://h:1", "-o", "wide", "--all"],
    });
  });

  it("keeps later positionals as arguments", () => {
    expect(findCommand(["node", "show", "n1", "--json"])).toEqual({
      words: ["node", "show"],
      rest: ["n1", "--json"],
    });
  });
});

describe("specFromFlags", () => {
  it("turns campaign flags into a CampaignSpec, leaving unset what was not given", () => {
    const { values } = parseFlags(
      [
        "--version=1.2.0",
        "--batches=5:1m,100:2m",
        "--threshold=10",
        "--selector=zone=a",
        "--pool=edge",
        "--exclude-node=n9",
        "--exclude-tag=canary=false",
        "--on-breach=pause",
        "--soak=30s",
      ],
      {
        version: { type: "string", description: "" },
        batches: { type: "string", description: "" },
        threshold: { type: "string", description: "" },
        selector: { type: "string", multiple: true, description: "" },
        pool: { type: "string", multiple: true, description: "" },
        "exclude-node": { type: "string", multiple: true, description: "" },
        "exclude-tag": { type: "string", multiple: true, description: "" },
        "on-breach": { type: "string", description: "" },
        soak: { type: "string", description: "" },
      },
    );
    const spec = specFromFlags(values);
    expect(spec.targetVersion).toBe("1.2.0");
    expect(spec.batches.map((b) => [b.percent, Number(b.minDuration?.seconds)])).toEqual([
      [5, 60],
      [100, 120],
    ]);
    expect(spec.failureThresholdPercent).toBe(10);
    expect(spec.disruptionBudgetPercent).toBeUndefined();
    expect(spec.reconnectTimeout).toBeUndefined();
    expect(Number(spec.soak?.seconds)).toBe(30);
    expect(spec.onBreach).toBe(2);
    expect(spec.selector?.labels).toEqual({ zone: "a" });
    expect(spec.selector?.pools).toEqual(["edge"]);
    expect(spec.exclude?.nodeIds).toEqual(["n9"]);
    expect(spec.exclude?.tags).toEqual({ canary: "false" });
  });

  it("refuses an unknown --on-breach action", () => {
    const { values } = parseFlags(["--version=1.0.0", "--on-breach=explode"], {
      version: { type: "string", description: "" },
      "on-breach": { type: "string", description: "" },
    });
    expect(() => specFromFlags(values)).toThrow(
      new UsageError('invalid value "explode" for --on-breach: expected rollback, pause, stop'),
    );
  });
});
