import { describe, expect, it } from "vitest";
import { type Gate, gateLabel, parseGate } from "../../../control/campaign/index.js";

function gates(...texts: string[]): Gate[] {
  return texts.map((t) => {
    const p = parseGate(t);
    if (!p.ok) throw new Error(p.message);
    return p.gate;
  });
}

// The label is what breach messages, audit rows and `campaign why` (every role) read.
describe("a gate's label in messages", () => {
  it("names a webhook by its origin only: its path and query carry the credential", () => {
    const g = gates(
      "prometheus http://prom:9090 up",
      "webhook https://user:pw@hooks.example:8443/services/T000/SECRET?token=abc",
    );
    expect(gateLabel(g, 0)).toBe("gate 1 (prometheus up)");
    expect(gateLabel(g, 1)).toBe("gate 2 (webhook https://hooks.example:8443/…)");
    expect(gateLabel(g, 2)).toBe("gate 3");
  });
});
