import { describe, expect, it } from "vitest";
import { type PruneRelease, planPrune } from "../../../control/releases/prune-plan.js";

const release = (version: string, sequence: number, extra: Partial<PruneRelease> = {}) => ({
  version,
  sequence,
  yanked: false,
  stored: true,
  ...extra,
});

const versions = (list: readonly { version: string }[]) => list.map((r) => r.version);

describe("which releases a prune frees", () => {
  it("keeps the newest N and frees the others, yanked ones first, then oldest first", () => {
    const plan = planPrune({
      releases: [
        release("1.0", 10),
        release("1.1", 11, { yanked: true }),
        release("1.2", 12),
        release("1.3", 13),
        release("1.4", 14),
      ],
      inUse: new Map(),
      keep: 2,
    });
    expect(versions(plan.prune)).toEqual(["1.1", "1.0", "1.2"]);
    expect(plan.kept).toEqual([
      { version: "1.4", reason: "one of the newest 2" },
      { version: "1.3", reason: "one of the newest 2" },
    ]);
  });

  it("never counts a yanked release among the newest N", () => {
    const plan = planPrune({
      releases: [release("1.0", 10), release("1.1", 11), release("1.2", 12, { yanked: true })],
      inUse: new Map(),
      keep: 1,
    });
    expect(versions(plan.prune)).toEqual(["1.2", "1.0"]);
    expect(versions(plan.kept)).toEqual(["1.1"]);
  });

  it("keeps every release in use, whatever its age or yank, and says why", () => {
    const plan = planPrune({
      releases: [
        release("1.0", 10),
        release("1.1", 11, { yanked: true }),
        release("1.2", 12),
        release("1.3", 13),
      ],
      inUse: new Map([
        ["1.0", "a node may roll back to it"],
        ["1.1", "a node runs it"],
      ]),
      keep: 1,
    });
    expect(versions(plan.prune)).toEqual(["1.2"]);
    expect(plan.kept).toEqual([
      { version: "1.3", reason: "one of the newest 1" },
      { version: "1.1", reason: "a node runs it" },
      { version: "1.0", reason: "a node may roll back to it" },
    ]);
  });

  it("leaves out releases with no bytes stored here (pruned already, or served from a URL)", () => {
    const plan = planPrune({
      releases: [release("1.0", 10, { stored: false }), release("1.1", 11), release("1.2", 12)],
      inUse: new Map(),
      keep: 1,
    });
    expect(versions(plan.prune)).toEqual(["1.1"]);
    expect(versions(plan.kept)).toEqual(["1.2"]);
  });

  it("keeps nothing for age with --keep 0, only what is in use", () => {
    const plan = planPrune({
      releases: [release("1.0", 10), release("1.1", 11)],
      inUse: new Map([["1.1", "a live campaign targets it"]]),
      keep: 0,
    });
    expect(versions(plan.prune)).toEqual(["1.0"]);
  });
});
