import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { gateStatesOf, windowStateOf } from "../../../control/admin/campaign-windows-gates.js";
import {
  type GateResult,
  type MaintenanceWindow,
  parseGate,
  parseWindow,
} from "../../../control/campaign/index.js";

function windows(...texts: string[]): MaintenanceWindow[] {
  return texts.map((t) => {
    const p = parseWindow(t);
    if (!p.ok) throw new Error(p.message);
    return p.window;
  });
}
const utc = (iso: string) => Date.parse(`${iso}Z`);
const ms = (ts: Timestamp | undefined) =>
  ts === undefined ? undefined : new Date(timestampMs(ts)).toISOString();

describe("a campaign's window state", () => {
  // 2026-12-07 is a Monday.
  const mon = windows("Mon 02:00-03:00 UTC");

  it("is open inside a window, with when it closes and when it next opens", () => {
    const s = windowStateOf(mon, utc("2026-12-07T02:30:00"));
    expect([s?.open, ms(s?.closesAt), ms(s?.nextOpensAt)]).toEqual([
      true,
      "2026-12-07T03:00:00.000Z",
      "2026-12-14T02:00:00.000Z",
    ]);
  });

  it("is closed outside every window, with when the next opens and no closing", () => {
    const s = windowStateOf(
      windows("Mon 02:00-03:00 UTC", "Wed 22:00-23:00 Europe/Berlin"),
      utc("2026-12-08T12:00:00"),
    );
    expect([s?.open, s?.closesAt, ms(s?.nextOpensAt)]).toEqual([
      false,
      undefined,
      "2026-12-09T21:00:00.000Z",
    ]);
  });

  it("is absent without windows", () => {
    expect(windowStateOf(undefined, 0)).toBeUndefined();
    expect(windowStateOf([], 0)).toBeUndefined();
  });
});

describe("a campaign's gate states", () => {
  const gate = (t: string) => {
    const p = parseGate(t);
    if (!p.ok) throw new Error(p.message);
    return p.gate;
  };
  const spec = {
    gates: [gate("prometheus http://p:9090 up"), gate("webhook https://hooks.example/secret/path")],
    gateGrace: 60_000,
  } as const;
  const result = (over: Partial<GateResult>): GateResult => ({
    batch: 0,
    gate: 0,
    status: "pass",
    at: 1_000,
    value: "1",
    message: "1 sample(s)",
    ...over,
  });

  it("shows every gate in spec order, the latest result of each, its grace, and a webhook only by its origin", () => {
    const states = gateStatesOf(
      spec,
      [result({ at: 5_000, value: "0", status: "fail" }), result({ at: 9_000 })],
      10_000,
    );
    expect(
      states.map((s) => [s.index, s.text, s.status, s.value, s.failing, Number(s.grace?.seconds)]),
    ).toEqual([
      [0, "prometheus http://p:9090 up", "pass", "1", false, 60],
      [1, "webhook https://hooks.example/…", "", "", false, 60],
    ]);
  });

  it("counts an unreachable gate as failing only once it stayed unreachable for its grace", () => {
    const unreachable = result({
      status: "unreachable",
      value: "unreachable",
      at: 50_000,
      unreachableSince: 10_000,
    });
    expect(gateStatesOf(spec, [unreachable], 69_999)[0]?.failing).toBe(false);
    expect(gateStatesOf(spec, [unreachable], 70_000)[0]?.failing).toBe(true);
    expect(ms(gateStatesOf(spec, [unreachable], 70_000)[0]?.unreachableSince)).toBe(
      "1970-01-01T00:00:10.000Z",
    );
    expect(gateStatesOf(spec, [result({ status: "fail" })], 1_000)[0]?.failing).toBe(true);
  });
});
