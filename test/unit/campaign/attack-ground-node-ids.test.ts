/**
 * Attack (one leaked join token rolls back every campaign): a join token lets its holder
 * choose the node ids it enrolls (Hello's `node_id`). Canary order, after the nodes labelled
 * `canary=true`, is the public SHA-256 of the id, so the holder grinds ids whose hash starts
 * with zeros (a few thousand hashes each, milliseconds) and its fake nodes take the whole
 * first batch of every campaign whose selector they match (the default selector matches all),
 * refuse the upgrade, and breach it. The label fix (Hello's `canary=true` ignored) does not
 * help: the fakes need no label to come first.
 *
 * Expected: a node's place in canary order cannot be chosen by whoever names it (a keyed or
 * per-fleet secret order, or new nodes placed after established ones), so five fakes among a
 * hundred nodes do not make up the 5 % canary batch. Under any order the enrolling party
 * cannot steer, all five landing there has a probability of about 1 in 75 million.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type Candidate, planCampaign, resolveSpec } from "../../../control/campaign/index.js";
import { fleet, NEW } from "./harness.js";

/**
 * Ids an attacker grinds so their SHA-256 starts with "000" (about 4096 tries each): the
 * public hash was the order once; the fleet's secret is what it cannot know.
 */
function groundIds(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const id = `web-${i.toString(36)}`;
    if (createHash("sha256").update(id, "utf8").digest("hex").startsWith("000")) out.push(id);
  }
  return out;
}

describe("node ids chosen by a join-token holder", () => {
  it("do not fill the canary batch", () => {
    const honest = fleet(95);
    const template = honest[0] as Candidate;
    const fakes = groundIds(5).map((id) => ({ ...template, id }));
    const secret = randomBytes(32).toString("hex");
    const plan = planCampaign(
      resolveSpec({ targetVersion: NEW }),
      [...honest, ...fakes],
      undefined,
      undefined,
      secret,
    );
    const canary = plan.batches[0]?.nodeIds ?? [];
    expect(canary).toHaveLength(5);
    const fakeIds = new Set(fakes.map((f) => f.id));
    expect(canary.filter((id) => fakeIds.has(id)).length).toBeLessThan(canary.length);
  });
});
