/**
 * The dashboard's node list for a fleet of thousands, in a real browser (Debian's Chromium
 * driven by playwright-core) against a real Control and simulated agents: a search by a part
 * of the node id and the column sorts go to the admin API (its total counts the matches);
 * each node id opens the node's page with what `agentctl node show` prints and the campaigns
 * that included it; a revoked node reads revoked there and on the fleet page, not offline.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { type Browser, launchChromium } from "../helpers/chromium.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  NEWER,
  quickSpec,
} from "../integration/campaign-fixture.js";

describe("the dashboard's node list, node page and revoked nodes", { timeout: 90_000 }, () => {
  let fx: CampaignFixture;
  let browser: Browser;
  let ui: string;
  let campaignId = "";
  const pageErrors: string[] = [];

  beforeAll(async () => {
    fx = await campaignFixture();
    ui = `${fx.tc.adminUrl}/ui/`;
    [, , , , browser] = await Promise.all([
      fx.register(NEW).then(() => fx.register(NEWER)),
      fx.fleet({ count: 5, idPrefix: "web", labels: { pool: "web", zone: "a" } }),
      fx.fleet({ count: 3, idPrefix: "db", labels: { pool: "db" } }),
      fx.fleet({ count: 2, idPrefix: "edge", labels: { pool: "edge" }, version: NEWER }),
      launchChromium(),
    ]);
    await fx.tc.client(ReleaseService).yankRelease({ version: NEWER, reason: "corrupts data" });
    await fx.tc.client(NodeService).revokeNode({ nodeId: "web-00005", reason: "stolen" });
    const started = await fx.campaigns.startCampaign({
      spec: quickSpec(NEW, [5, 100], { selector: { pools: ["db"] } }),
    });
    campaignId = started.campaign?.id ?? "";
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fx?.stop();
    expect(pageErrors).toEqual([]);
  });

  async function signedIn(path = ""): Promise<Page> {
    const page = await browser.context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${ui}#token=${fx.tc.viewerToken}`);
    await page.waitForSelector(".badge[data-role=viewer]");
    if (path) await page.goto(`${ui}${path}`);
    return page;
  }

  const rowIds = (page: Page) =>
    page.$$eval("table.nodes tbody tr", (rows) => rows.map((r) => r.getAttribute("data-node")));

  /** The node list's row ids once `ready` holds of them (polled; the list reads the API). */
  async function rowsWhen(page: Page, ready: (ids: (string | null)[]) => boolean) {
    let ids: (string | null)[] = [];
    for (let i = 0; i < 150; i++) {
      ids = await rowIds(page);
      if (ready(ids)) return ids;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the node list never got there: ${ids.join(",")}`);
  }

  it("searches node ids on the server: a part of the id, any case, with the count of matches", async () => {
    const page = await signedIn();
    await page.click("nav a:text-is('Nodes')");
    await page.waitForSelector("table.nodes tr[data-node='web-00001']");
    await page.fill("input[name=node-id]", "DB-0");
    expect(await rowsWhen(page, (ids) => ids.length === 3)).toEqual([
      "db-00001",
      "db-00002",
      "db-00003",
    ]);
    expect(await page.textContent("h2 .muted")).toBe("3");
    await page.fill("input[name=node-id]", "00002");
    expect(await rowsWhen(page, (ids) => ids[1] === "edge-00002")).toEqual([
      "db-00002",
      "edge-00002",
      "web-00002",
    ]);
    await page.fill("input[name=node-id]", "no-such-node");
    await page.waitForSelector("text=No node matches.");
    await page.close();
  });

  it("sorts by a column on the server, and reverses it on a second click", async () => {
    const page = await signedIn("#/nodes");
    await page.waitForSelector("table.nodes tr[data-node='web-00001']");
    await page.click("th button[data-sort=agent_version]");
    await page.waitForSelector("th[aria-sort=ascending] button[data-sort=agent_version]");
    // Ascending by version: the yanked 3.0.0 of the edge nodes comes last (by node id then).
    const ascending = await rowsWhen(page, (ids) => ids[ids.length - 1] === "edge-00002");
    expect(ascending.slice(-2)).toEqual(["edge-00001", "edge-00002"]);
    expect(ascending).toHaveLength(10);
    await page.click("th button[data-sort=agent_version]");
    await page.waitForSelector("th[aria-sort=descending] button[data-sort=agent_version]");
    expect((await rowsWhen(page, (ids) => ids[0] === "edge-00002")).slice(0, 2)).toEqual([
      "edge-00002",
      "edge-00001",
    ]);
    await page.click("th button[data-sort=pool]");
    expect(await rowsWhen(page, (ids) => ids[0] === "db-00001")).toEqual([
      "db-00001",
      "db-00002",
      "db-00003",
      "edge-00001",
      "edge-00002",
      "web-00001",
      "web-00002",
      "web-00003",
      "web-00004",
      "web-00005",
    ]);
    await page.close();
  });

  it("opens a node's page from its id: version, state, pool, labels, last seen and its campaigns", async () => {
    const page = await signedIn("#/nodes");
    await page.click("table.nodes tr[data-node='db-00002'] a[href='#/nodes/db-00002']");
    await page.waitForSelector(".node-page dd[data-fact=status]");
    expect(page.url()).toBe(`${ui}#/nodes/db-00002`);
    const fact = (name: string) => page.textContent(`.node-page dd[data-fact=${name}]`);
    expect(await fact("status")).toBe("online");
    expect(await fact("pool")).toBe("db");
    expect(await fact("labels")).toContain("pool=db");
    expect(await fact("last-seen")).not.toBe("");
    expect(await fact("version")).toMatch(/^(1\.0\.0|2\.0\.0)$/);
    await page.waitForSelector(`table.node-campaigns tr[data-campaign='${campaignId}']`);
    expect(
      await page.textContent(`table.node-campaigns tr[data-campaign='${campaignId}']`),
    ).toContain(NEW);
    await page.click("a:text-is('← Nodes')");
    await page.waitForSelector("table.nodes");
    await page.close();
  });

  it("marks a yanked version and a revoked node on the node's page", async () => {
    const page = await signedIn("#/nodes/edge-00001");
    await page.waitForSelector(".node-page dd[data-fact=version] [data-yanked]");
    expect(await page.textContent(".node-page dd[data-fact=version]")).toBe(`${NEWER} yanked`);
    await page.goto(`${ui}#/nodes/web-00005`);
    await page.waitForSelector(".node-page[data-node='web-00005'] dd[data-fact=status]");
    expect(await page.textContent(".node-page dd[data-fact=status]")).toBe("revoked");
    expect(await page.textContent(".node-page dd[data-fact=campaign]")).toBe("-");
    await page.goto(`${ui}#/nodes/no-such-node`);
    await page.waitForSelector(".node-page .error");
    expect(await page.textContent(".node-page .error")).toMatch(/no node with id "no-such-node"/);
    await page.close();
  });

  it("counts a revoked node as revoked on the fleet page, not offline", async () => {
    const page = await signedIn("#/fleet");
    const web = await page.waitForSelector("table.pools tr[data-pool=web]");
    expect(await web.$eval(".online-count", (td) => td.textContent)).toBe("4");
    expect(await web.$eval(".offline-count", (td) => td.textContent)).toBe("0");
    expect(await web.$eval(".revoked-count", (td) => td.textContent)).toBe("1");
    expect(await page.textContent(".fleet-total")).toMatch(
      /10 nodes, 9 online, 0 offline, 1 revoked/,
    );
    await page.close();
  });
});
