import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { formatDesiredTable } from "../../../cli/commands/desired.js";
import { DesiredVersionSchema } from "../../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";

const desired = (fields: {
  nodes: number;
  converged: number;
  ahead?: number;
  haltedReason?: string;
}) =>
  create(DesiredVersionSchema, {
    id: "d-0123456789",
    targetVersion: "2.4.0",
    selector: { pools: ["prod"] },
    setBy: "alice",
    ...fields,
  });

/** The STATE column of the one row `desired list` prints for `d`. */
function stateOf(d: ReturnType<typeof desired>): string {
  const row = formatDesiredTable([d]).split("\n")[1] ?? "";
  return row.slice(formatDesiredTable([d]).split("\n")[0]?.indexOf("STATE")).trim();
}

describe("desired list's STATE column", () => {
  it("says a desired version whose nodes all run it is converged, not converging", () => {
    expect(stateOf(desired({ nodes: 100, converged: 100 }))).toBe("converged");
  });

  it("counts the nodes still behind while converging", () => {
    expect(stateOf(desired({ nodes: 100, converged: 97 }))).toBe("converging: 3 behind");
  });

  it("says a desired version that governs no node (superseded, or nothing matches) is idle", () => {
    expect(stateOf(desired({ nodes: 0, converged: 0 }))).toBe("idle: governs no node");
  });

  it("shows a halt with its reason, whatever the counts", () => {
    expect(stateOf(desired({ nodes: 5, converged: 2, haltedReason: "3 failed" }))).toBe(
      "halted: 3 failed",
    );
  });

  it("counts nodes ahead of the target (a higher sequence) as neither converged nor behind", () => {
    expect(stateOf(desired({ nodes: 100, converged: 97, ahead: 3 }))).toBe("converged (3 ahead)");
    expect(stateOf(desired({ nodes: 100, converged: 95, ahead: 3 }))).toBe("converging: 2 behind");
  });
});
