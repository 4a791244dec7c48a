/**
 * What an operator reported of the dashboard (issue 38), each seen in a real browser
 * (Debian's Chromium driven by playwright-core) against a real Control and simulated agents:
 * the fleet page marks the nodes running a yanked release; the start form offers only the
 * registered releases that are not yanked; after a gate breach the Gates table shows the
 * result that breached it, and "Retry N nodes" names what a retry takes; a batch held by a
 * closed maintenance window says so, as the page's "Waits for" line does, instead of counting
 * its minimum duration down.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { type Browser, launchChromium } from "../helpers/chromium.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  NEWER,
  waitForCampaign,
} from "../integration/campaign-fixture.js";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

describe("the dashboard's smaller frictions (issue 38) in a real browser", {
  timeout: 90_000,
}, () => {
  let fx: CampaignFixture;
  let browser: Browser;
  let ui: string;
  /** A webhook gate that always answers 503: it fails every batch it judges. */
  let hook: Server;
  let hookUrl = "";
  const pageErrors: string[] = [];
  /** A window that opens the day after tomorrow (UTC): closed now, whatever the hour. */
  const day = DAYS[(new Date().getUTCDay() + 2) % 7] as string;

  beforeAll(async () => {
    hook = createServer((_req, res) => {
      res.statusCode = 503;
      res.end("down");
    });
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    fx = await campaignFixture();
    ui = `${fx.tc.adminUrl}/ui/`;
    [, , , , browser] = await Promise.all([
      fx.register(NEW).then(() => fx.register(NEWER)),
      fx.fleet({ count: 2, idPrefix: "gate", labels: { pool: "gate" } }),
      fx.fleet({ count: 2, idPrefix: "win", labels: { pool: "win" } }),
      // Two nodes already run 3.0.0, the release yanked below.
      fx.fleet({ count: 2, idPrefix: "bad", labels: { pool: "bad" }, version: NEWER }),
      launchChromium(),
    ]);
    await fx.tc.client(ReleaseService).yankRelease({ version: NEWER, reason: "corrupts data" });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fx?.stop();
    await new Promise((resolve) => hook?.close(resolve));
  });

  async function signedIn(token: string, role: string): Promise<Page> {
    const page = await browser.context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (m) => {
      if (m.type() === "error" && !/status of 40[0-9]/.test(m.text())) pageErrors.push(m.text());
    });
    await page.goto(`${ui}#token=${token}`);
    await page.waitForSelector(`.badge[data-role=${role}]`);
    return page;
  }

  it("marks the nodes that run a yanked release on the fleet page", async () => {
    const page = await signedIn(fx.tc.viewerToken, "viewer");
    await page.click("nav a:text-is('Fleet')");
    const bad = await page.waitForSelector(`svg.version-chart g[data-version='${NEWER}']`);
    await page.waitForSelector(`svg.version-chart g[data-version='${NEWER}'][data-yanked=true]`);
    expect(await bad.$eval("text.version-label", (t) => t.textContent)).toBe(`${NEWER} (yanked)`);
    expect(
      await page.$eval("svg.version-chart g[data-version='1.0.0']", (g) => g.dataset.yanked),
    ).toBe("false");
    expect(await page.textContent(".yanked-running")).toBe(
      `2 nodes run a yanked release: ${NEWER} (2)`,
    );
    await page.close();
  });

  it("marks a yanked version and a revoked node in the node list, as agentctl node list does", async () => {
    const nodes = fx.tc.client(NodeService);
    const bad = (await nodes.listNodes({ pool: "bad", pageSize: 10 })).nodes.map((n) => n.nodeId);
    const [revoked, kept] = bad as [string, string];
    await nodes.revokeNode({ nodeId: revoked, reason: "dashboard test" });
    const page = await signedIn(fx.tc.viewerToken, "viewer");
    await page.click("nav a:text-is('Nodes')");
    const keptRow = await page.waitForSelector(`table.nodes tr[data-node='${kept}']`);
    expect(await keptRow.$eval("[data-yanked]", (b) => b.textContent)).toBe("yanked");
    const revokedRow = await page.waitForSelector(`table.nodes tr[data-node='${revoked}']`);
    await revokedRow.waitForSelector("[data-revoked]");
    expect(await revokedRow.$eval("[data-revoked]", (b) => b.textContent)).toBe("revoked");
    expect(
      await page.$$eval("table.nodes tr[data-node^='gate'] [data-yanked]", (b) => b.length),
    ).toBe(0);
    await page.close();
  });

  it("offers the registered releases that are not yanked as the start form's target version", async () => {
    const page = await signedIn(fx.tc.operatorToken, "operator");
    await page.goto(`${ui}#/campaigns/new`);
    await page.waitForSelector(`select[name=version] option[value='${NEW}']`, {
      state: "attached",
    });
    expect(
      await page.$$eval("select[name=version] option", (options) =>
        options.map((o) => o.getAttribute("value")),
      ),
    ).toEqual(["", NEW]);
    await page.selectOption("select[name=version]", NEW);
    await page.fill("input[name=pools]", "gate");
    await page.click("button:text-is('Plan')");
    await page.waitForSelector(".plan-preview");
    await page.click("button:text-is('Start this campaign…')");
    await page.waitForSelector(`.confirm >> text=Start the campaign of ${NEW} on 2 nodes now?`);
    await page.click("button:text-is('Cancel')");
    await page.close();
  });

  it("after a gate breach shows the gate's result that breached it, and offers a retry of the nodes it takes", async () => {
    const { campaign } = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEW,
        selector: { pools: ["gate"] },
        batches: [5, 100].map((percent) => ({ percent, minDuration: { seconds: 0n, nanos: 0 } })),
        gates: [`webhook ${hookUrl}`],
        reason: "gate breach",
      },
    });
    const id = campaign?.id ?? "";
    const page = await signedIn(fx.tc.operatorToken, "operator");
    await page.goto(`${ui}#/campaigns/${id}`);
    await page.waitForSelector(".campaign .live-live, .campaign .live-finished");
    // The gate fails the first batch: it is rolled back and the campaign ends.
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.phase).toBe(CampaignPhase.ROLLED_BACK);
    await page.waitForSelector(".live-finished", { timeout: 20_000 });
    const gate = await page.waitForSelector("tr[data-gate='0'][data-status=fail]", {
      timeout: 10_000,
    });
    expect(await gate.$$eval("td", (td) => td.map((t) => t.textContent))).toEqual([
      "1",
      expect.stringMatching(/^webhook http:\/\/127\.0\.0\.1:\d+\/…$/),
      "fail (failing)",
      "HTTP 503",
      expect.stringMatching(/^\d{4}-\d\d-\d\d /),
      "1m0s",
    ]);
    expect(await page.textContent(".gates-batch")).toBe(
      "Results of batch 1, where the campaign ended.",
    );

    // The retry is offered with the count of nodes it takes, and takes exactly those.
    const retry = await page.waitForSelector(".actions button:text-matches('^Retry')");
    const label = (await retry.textContent()) ?? "";
    expect(label).toMatch(/^Retry \d+ nodes?$/);
    const count = Number(/\d+/.exec(label)?.[0]);
    await retry.click();
    await page.waitForURL((url) => /#\/campaigns\/.+$/.test(url.hash) && !url.hash.endsWith(id));
    const next = /#\/campaigns\/(.+)$/.exec(page.url())?.[1] ?? "";
    const retried = (await fx.campaigns.getCampaign({ id: next, summaryOnly: true })).campaign;
    expect(retried?.retryOf).toBe(id);
    expect(retried?.nodeCount).toBe(count);
    expect(count).toBe(2);
    await fx.campaigns.abortCampaign({ id: next, rollback: false, reason: "test over" });
    await page.close();
  });

  it("says a batch waits for its closed window, as the waits say, instead of counting its minimum duration down", async () => {
    const { campaign } = await fx.campaigns.startCampaign({
      spec: {
        targetVersion: NEW,
        selector: { pools: ["win"] },
        windows: [`${day} 02:00-03:00 UTC`],
        batches: [5, 100].map((percent) => ({ percent, minDuration: { seconds: 60n, nanos: 0 } })),
        reason: "window",
      },
    });
    const id = campaign?.id ?? "";
    const page = await signedIn(fx.tc.viewerToken, "viewer");
    await page.goto(`${ui}#/campaigns/${id}`);
    const wait = await page.waitForSelector(".waits li[data-wait=window_closed]");
    const sentence = (await wait.textContent()) ?? "";
    expect(sentence).toMatch(new RegExp(`^window closed: opens ${day} 02:00 UTC$`));
    const countdown = "li.batch[data-batch='0'][data-state=running] .countdown";
    await expect.poll(() => page.textContent(countdown)).toBe(`${sentence}; 1m0s of 1m0s left`);
    // Seconds later it has not counted down: the window is still closed.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await page.textContent(countdown)).toBe(`${sentence}; 1m0s of 1m0s left`);
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
