/**
 * Which tracked campaign a node's campaign-less facts (a failed ConfigStatus names no
 * operation) belong to: the newest campaign that holds the node, the one whose operation the
 * node follows, whatever order the campaigns were tracked in.
 */
import { describe, expect, it } from "vitest";
import { TrackedCampaigns } from "../../../control/campaign-worker/tracked-campaigns.js";

describe("the campaign of a node among tracked campaigns", () => {
  it("is the newest campaign holding it, even when an older one was tracked after it", () => {
    const t = new TrackedCampaigns();
    // n1 ended in the older campaign (canceled by an abort that left n2 in flight) and was
    // then taken by the newer one, where it is upgrading.
    t.track("newer", ["n1"], 2000);
    t.track("older", ["n1", "n2"], 1000);
    expect(t.campaignOf("n1")).toBe("newer");
    expect(t.campaignOf("n2")).toBe("older");
  });

  it("is the newest campaign holding it when tracked in creation order, ties going to the higher id", () => {
    const t = new TrackedCampaigns();
    t.track("a", ["n1"], 1000);
    t.track("c", ["n1"], 2000);
    t.track("b", ["n1"], 2000);
    expect(t.campaignOf("n1")).toBe("c");
  });

  it("is unknown once the campaign holding it is untracked (the store then names the newest live one)", () => {
    const t = new TrackedCampaigns();
    t.track("older", ["n1"], 1000);
    t.track("newer", ["n1"], 2000);
    t.untrack("newer");
    expect(t.campaignOf("n1")).toBeUndefined();
    expect(t.has("older")).toBe(true);
  });
});
