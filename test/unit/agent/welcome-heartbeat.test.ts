/**
 * Attack: a Welcome's heartbeat interval was taken as sent. -1 s made the Agent heartbeat
 * every millisecond for as long as the stream lasted; 10^10 s overflowed the timer (Node
 * fires an overflowing timeout after 1 ms, with a TimeoutOverflowWarning).
 *
 * Expected: an unset, zero or negative interval means the default (10 s); any other is kept
 * within Control's own range from 50 ms (its lowest `timeouts.heartbeatSeconds`) to 10 min.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HEARTBEAT_MAX_MS, HEARTBEAT_MIN_MS, heartbeatMsOf } from "../../../agent/core/messages.js";
import { WelcomeSchema } from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const welcome = (seconds: bigint, nanos = 0) =>
  create(WelcomeSchema, { sessionId: "s", heartbeatInterval: { seconds, nanos } });

describe("the heartbeat period a Welcome asks for", () => {
  it.each<[string, ReturnType<typeof welcome>, number]>([
    ["unset: the default", create(WelcomeSchema, { sessionId: "s" }), 10_000],
    ["zero: the default", welcome(0n), 10_000],
    ["-1 s: the default", welcome(-1n), 10_000],
    ["-1 ns: the default", welcome(0n, -1), 10_000],
    ["1 ns: 50 ms", welcome(0n, 1), 50],
    ["200 ms: as asked", welcome(0n, 200_000_000), 200],
    ["30 s: as asked", welcome(30n), 30_000],
    ["10^10 s: 10 min", welcome(10_000_000_000n), 600_000],
    ["2^63-1 s: 10 min", welcome(2n ** 63n - 1n), 600_000],
  ])("%s", (_what, w, ms) => {
    expect(heartbeatMsOf(w, 1)).toBe(ms);
  });

  it("stays within its bounds, then is scaled (the simulator's fleets)", () => {
    expect([HEARTBEAT_MIN_MS, HEARTBEAT_MAX_MS]).toEqual([50, 600_000]);
    expect(heartbeatMsOf(welcome(-1n), 0.5)).toBe(5_000);
    expect(heartbeatMsOf(welcome(10_000_000_000n), 0.01)).toBe(6_000);
  });
});
