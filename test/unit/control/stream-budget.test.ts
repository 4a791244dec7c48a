import { describe, expect, it } from "vitest";
import { Slots } from "../../../control/agents/slots.js";
import {
  currentStreamBudget,
  FALLBACK_MAX_STREAMS,
  streamBudget,
} from "../../../control/agents/stream-budget.js";
import { ConfigError, loadConfig } from "../../../control/config.js";
import { parseOpenFileLimit, readOpenFileLimit } from "../../../control/shared/open-file-limit.js";

const PROC_LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                524288               files
Max locked memory         8388608              8388608              bytes
`;

describe("the open-file limit", () => {
  it.each([
    ["the soft limit of a Linux /proc/self/limits", PROC_LIMITS, 20000],
    [
      "nothing when the limit is unlimited",
      "Max open files  unlimited  unlimited  files\n",
      undefined,
    ],
    ["nothing when the row is missing", "Max cpu time  unlimited  unlimited  seconds\n", undefined],
    ["nothing from garbage", "Max open files  lots  more  files\n", undefined],
  ])("reads %s", (_name, text, expected) => {
    expect(parseOpenFileLimit(text)).toBe(expected);
  });

  it("is unknown where /proc/self/limits cannot be read", () => {
    expect(
      readOpenFileLimit(() => {
        throw new Error("ENOENT");
      }),
    ).toBeUndefined();
  });

  it.runIf(process.platform === "linux")("is read from this process on Linux", () => {
    expect(readOpenFileLimit()).toBeGreaterThan(0);
    expect(currentStreamBudget(undefined).source).toBe("open-file limit");
  });
});

describe("the stream budget", () => {
  it.each([
    // [open-file limit, maxStreams, maxConnections]
    [20_000, 17_928, 18_872],
    [256, 107, 115],
    [1024, 801, 844],
    [1_048_576, 946_218, 996_019],
  ])(
    "with an open-file limit of %i derives %i streams and %i connections",
    (limit, streams, conns) => {
      const budget = streamBudget(undefined, limit);
      expect(budget).toEqual({
        maxStreams: streams,
        maxConnections: conns,
        openFileLimit: limit,
        source: "open-file limit",
      });
      // Never more connections than the descriptors left after the reserve.
      expect(budget.maxConnections).toBeLessThan(limit - 128);
    },
  );

  it("keeps a positive limit under a tiny open-file limit", () => {
    expect(streamBudget(undefined, 64).maxStreams).toBeGreaterThanOrEqual(1);
  });

  it("uses a configured maxStreams, with 5 % (at least 8) more connections", () => {
    expect(streamBudget(20, 20_000)).toMatchObject({ maxStreams: 20, maxConnections: 28 });
    expect(streamBudget(1000, 20_000)).toMatchObject({ maxStreams: 1000, maxConnections: 1050 });
    expect(streamBudget(20, 20_000).warning).toBeUndefined();
  });

  it("caps connections below the open-file limit when the configured maxStreams needs more, and warns", () => {
    const budget = streamBudget(50_000, 20_000);
    expect(budget.maxStreams).toBe(50_000);
    expect(budget.maxConnections).toBe(18_872);
    expect(budget.warning).toMatch(/open-file limit 20000 leaves 18872/);
  });

  it("falls back to a fixed default where the open-file limit is unknown", () => {
    expect(streamBudget(undefined, undefined)).toEqual({
      maxStreams: FALLBACK_MAX_STREAMS,
      maxConnections: FALLBACK_MAX_STREAMS + 500,
      openFileLimit: undefined,
      source: "fallback",
    });
    expect(streamBudget(300, undefined)).toMatchObject({ maxStreams: 300, maxConnections: 315 });
  });
});

describe("limits.maxStreams", () => {
  it("is derived at start when not set", () => {
    expect(loadConfig({ env: {} }).limits.maxStreams).toBeUndefined();
  });

  it("comes from the config file's limits.maxStreams or AGENT_CONTROL_MAX_STREAMS", () => {
    const fromEnv = loadConfig({ env: { AGENT_CONTROL_MAX_STREAMS: "2500" } });
    expect(fromEnv.limits.maxStreams).toBe(2500);
    const fromFile = loadConfig({ env: {}, overrides: { limits: { maxStreams: 40 } } });
    expect(fromFile.limits.maxStreams).toBe(40);
  });

  it("keeps the other limits when set from the environment", () => {
    const config = loadConfig({ env: { AGENT_CONTROL_MAX_STREAMS: "10" } });
    expect(config.limits.maxConcurrentHandshakes).toBe(512);
  });

  it.each(["0", "-5", "1.5", "many"])("refuses %j", (value) => {
    expect(() => loadConfig({ env: { AGENT_CONTROL_MAX_STREAMS: value } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { AGENT_CONTROL_MAX_STREAMS: value } })).toThrow(
      /limits\.maxStreams/,
    );
  });
});

describe("slots", () => {
  it("hands out at most `limit` and takes them back", () => {
    const slots = new Slots(2);
    expect([slots.tryAcquire(), slots.tryAcquire(), slots.tryAcquire()]).toEqual([
      true,
      true,
      false,
    ]);
    expect(slots.held).toBe(2);
    slots.release();
    expect(slots.tryAcquire()).toBe(true);
    slots.release();
    slots.release();
    slots.release();
    expect(slots.held).toBe(0);
  });
});
