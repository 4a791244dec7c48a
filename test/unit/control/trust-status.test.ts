import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../control/agents/events.js";
import { trustRecorder } from "../../../control/agents/trust-recorder.js";
import { checkTrustStatus } from "../../../control/agents/validate.js";
import type { NodeTrust } from "../../../control/db/node-trust.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";
import { TrustStatusSchema } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const NOW = new Date("2026-12-01T12:00:00.000Z");
const log = createLogger({ level: "silent" });

describe("a TrustStatus as Control accepts it", () => {
  it("keeps a frozen status with its reason and since", () => {
    const since = new Date("2026-12-01T10:00:00.000Z");
    expect(
      checkTrustStatus(
        create(TrustStatusSchema, {
          frozen: true,
          reason: "expired",
          since: timestampFromDate(since),
        }),
        NOW,
      ),
    ).toEqual({ ok: true, value: { frozen: true, reason: "expired", since } });
  });

  it("drops the reason and since of a status that is not frozen", () => {
    expect(
      checkTrustStatus(
        create(TrustStatusSchema, { frozen: false, reason: "x", since: timestampFromDate(NOW) }),
        NOW,
      ),
    ).toEqual({ ok: true, value: { frozen: false, reason: "", since: null } });
  });

  it("cuts a long reason to 1024 characters and a since after now (a skewed clock) to now", () => {
    const checked = checkTrustStatus(
      create(TrustStatusSchema, {
        frozen: true,
        reason: "r".repeat(5000),
        since: timestampFromMs(NOW.getTime() + 3_600_000),
      }),
      NOW,
    );
    expect(
      checked.ok && { length: checked.value.reason.length, since: checked.value.since },
    ).toEqual({ length: 1024, since: NOW });
  });

  it.each([
    ["no since", {}],
    ["a since before 1970", { since: { seconds: -1n, nanos: 0 } }],
    ["a since after 9999", { since: { seconds: 253_402_300_800n, nanos: 0 } }],
    ["nanos out of range", { since: { seconds: 1n, nanos: 1_000_000_000 } }],
  ])("refuses a frozen status with %s", (_what, fields) => {
    expect(checkTrustStatus(create(TrustStatusSchema, { frozen: true, ...fields }), NOW)).toEqual({
      ok: false,
      message: "invalid TrustStatus: a frozen status needs since, a time from 1970 to 9999",
    });
  });
});

describe("the trust recorder", () => {
  const event = (nodeId: string, frozen: boolean, reason = ""): AgentEvent => ({
    kind: "trust_status",
    nodeId,
    frozen,
    reason,
    since: frozen ? NOW : null,
    at: NOW,
  });

  it("writes a node's reports in order, never two at once, and ignores other events", async () => {
    const written: NodeTrust[] = [];
    let inFlight = 0;
    let most = 0;
    const recorder = trustRecorder({
      record: async (trust) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        written.push(trust);
        inFlight--;
        return true;
      },
      log,
    });
    recorder.onEvent(event("a", true, "expired"));
    recorder.onEvent({ kind: "disconnected", nodeId: "a", sessionId: "s", reason: "" });
    recorder.onEvent(event("a", false));
    await recorder.settled();
    expect(written).toEqual([
      { nodeId: "a", frozenSince: NOW, reason: "expired" },
      { nodeId: "a", frozenSince: null, reason: "" },
    ]);
    expect(most).toBe(1);
  });

  it("runs at most maxInFlight writes, one per node at a time, and keeps only a node's latest waiting report", async () => {
    const written: string[] = [];
    let inFlight = 0;
    let most = 0;
    const recorder = trustRecorder({
      record: async (trust) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        written.push(`${trust.nodeId}:${trust.reason}`);
        inFlight--;
        return true;
      },
      log,
      maxInFlight: 2,
    });
    recorder.onEvent(event("a", true, "a1"));
    recorder.onEvent(event("b", true, "b1"));
    recorder.onEvent(event("c", true, "c1"));
    recorder.onEvent(event("a", true, "a2"));
    recorder.onEvent(event("a", true, "a3"));
    await recorder.settled();
    expect(most).toBe(2);
    expect(written.sort()).toEqual(["a:a1", "a:a3", "b:b1", "c:c1"]);
    expect(written.indexOf("a:a1")).toBeLessThan(written.indexOf("a:a3"));
  });

  it("goes on after a failed write", async () => {
    const written: string[] = [];
    let calls = 0;
    const recorder = trustRecorder({
      record: async (trust) => {
        if (calls++ === 0) throw new Error("connection lost");
        written.push(trust.reason);
        return true;
      },
      log,
    });
    recorder.onEvent(event("b", true, "first"));
    recorder.onEvent(event("b", true, "second"));
    await recorder.settled();
    expect(written).toEqual(["second"]);
  });

  it("stops waiting for a write that never returns once the shutdown grace has passed", async () => {
    const clock = new ManualClock(NOW.getTime());
    const recorder = trustRecorder({ record: () => new Promise<boolean>(() => {}), log });
    recorder.onEvent(event("hung", true, "expired"));
    let outcome: boolean | undefined;
    void recorder.settledWithin(clock, 10_000).then((settled) => {
      outcome = settled;
    });
    clock.advance(9_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toBeUndefined();
    clock.advance(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toBe(false);
  });

  it("answers at once, and true, when every write has returned within the grace", async () => {
    const clock = new ManualClock(NOW.getTime());
    const recorder = trustRecorder({ record: async () => true, log });
    recorder.onEvent(event("a", true, "expired"));
    expect(await recorder.settledWithin(clock, 10_000)).toBe(true);
    expect(clock.nextDue()).toBeUndefined();
  });
});
