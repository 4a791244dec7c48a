/**
 * The `agentctl` commands of the operator guide's "Enrolling nodes" section run as printed,
 * against a real Control with simulated agents (`printed-commands-fixture.ts`).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import {
  createGuideWorld,
  GUIDE_SECTIONS,
  type GuideWorld,
  keygen,
  readGuide,
  startGuideControl,
} from "./printed-commands-fixture.js";

describe("the operator guide's enrolling commands", { timeout: 400_000 }, () => {
  let world: GuideWorld | undefined;
  afterAll(async () => {
    await world?.cleanup();
  });

  it("names the file that runs each section of the guide that prints a command", async () => {
    const covered: string[] = Object.values(GUIDE_SECTIONS).flat();
    expect([...(await readGuide()).keys()].sort()).toEqual(covered.sort());
  });

  it("runs as printed against a real Control", async () => {
    world = await createGuideWorld(GUIDE_SECTIONS.enrolling);
    const w = world;
    // Control trusts the reader's two release keys (section 3 makes them).
    const pins = [await keygen(w, "alice.key"), await keygen(w, "bob.key")];
    const { tc } = await startGuideControl(w, pins);
    await w.guide('agentctl token create --ttl 24h --description "rack 12"');
    await w.guide("agentctl token list");
    const tokens = JSON.parse(await w.quietly(["token", "list", "--json"])) as {
      tokens: { id: string; description: string }[];
    };
    const rack = tokens.tokens.find((t) => t.description === "rack 12")?.id ?? "";
    await w.guide("agentctl token revoke <id>", { "<id>": rack });
    const reset = await w.guide('agentctl node reset web-17 --reason "disk replaced"', {
      "web-17": "spare-00001",
    });
    expect(reset.output).toMatch(/Reset node spare-00001 .*\? \[y\/N\]/);
    // The reset node's stream stays open; it is kept out of what follows.
    await tc.client(NodeService).disableNode({ nodeId: "spare-00001", reason: "reset" });
    await w.guide("agentctl token create --ttl 24h --max-uses 40 --label pool=web --label rack=12");
    await w.guide("agentctl node label web-17 canary=true", { "web-17": "spare-00001" });
    await w.guide("agentctl node label web-17 canary-", { "web-17": "spare-00001" });
    // Many nodes at once: the reader's file names a node of the fleet by its id.
    await writeFile(join(w.work, "labels.csv"), "node,rack,zone\nweb-00001,12,eu-1\n");
    await w.guide("agentctl node label --file labels.csv");
    const bulk = await w.guide("agentctl node label --selector pool=web,rack=12 zone=eu-1 old-");
    expect(bulk.output).not.toMatch(/error/i);
    const labelled = JSON.parse(await w.quietly(["node", "show", "web-00001", "--json"])) as {
      node?: { labels?: Record<string, string> };
    };
    expect(labelled.node?.labels).toMatchObject({ rack: "12", zone: "eu-1" });
    const revoked = await w.guide('agentctl node revoke web-17 --reason "host compromised" --yes', {
      "web-17": "spare-00001",
    });
    expect(revoked.output).toContain("node spare-00001 revoked");
    await w.guide("agentctl token create --ttl 1h --node web-17 --node web-18");
    await w.guide("agentctl token create --ttl 1h --allow-reenroll");
    const online = await w.guide("agentctl node list --online");
    expect(online.output).toContain("web-00001");
    await w.guide("agentctl node show <id>", { "<id>": "web-00001" });
    expect(w.notRun()).toEqual([]);
  });
});
