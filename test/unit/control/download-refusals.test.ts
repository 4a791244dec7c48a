import { describe, expect, it } from "vitest";
import { downloadRefusalLog } from "../../../control/releases/download-refusals.js";

function recorder() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    info: (fields: object, message: string) => {
      lines.push({ fields: fields as Record<string, unknown>, message });
    },
  };
}

describe("refused downloads are logged at most once a minute per client address", () => {
  it("logs the first refusal at once, then one line a minute with the count since the last", () => {
    const log = recorder();
    let now = 1_000_000;
    const refusals = downloadRefusalLog({ log, now: () => now });
    refusals.refused("10.0.0.7", "missing credential: a download needs a node token\n");
    for (let i = 0; i < 29; i++) {
      now += 2_000;
      refusals.refused("10.0.0.7", "missing credential");
    }
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]?.fields).toMatchObject({
      client: "10.0.0.7",
      refused: 1,
      reason: "missing credential: a download needs a node token",
    });
    expect(log.lines[0]?.message).toMatch(/download refused \(401\)/);
    now += 2_000; // 60 s after the first line
    refusals.refused("10.0.0.7", "missing credential");
    expect(log.lines).toHaveLength(2);
    expect(log.lines[1]?.fields).toMatchObject({ client: "10.0.0.7", refused: 30 });
  });

  it("counts each client address on its own", () => {
    const log = recorder();
    const refusals = downloadRefusalLog({ log, now: () => 0 });
    refusals.refused("10.0.0.7", "x");
    refusals.refused("10.0.0.8", "x");
    refusals.refused("10.0.0.7", "x");
    expect(log.lines.map((l) => l.fields.client)).toEqual(["10.0.0.7", "10.0.0.8"]);
  });

  it("forgets clients whose minute is over once it remembers too many", () => {
    const log = recorder();
    let now = 0;
    const refusals = downloadRefusalLog({ log, now: () => now, maxClients: 2 });
    refusals.refused("a", "x");
    refusals.refused("b", "x");
    now = 61_000;
    refusals.refused("c", "x");
    refusals.refused("c", "x");
    expect(log.lines.map((l) => l.fields.client)).toEqual(["a", "b", "c"]);
  });
});
