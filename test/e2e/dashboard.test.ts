/**
 * The dashboard at /ui in a real browser (Debian's Chromium driven by playwright-core) against
 * a real Control and simulated agents: signing in by typing a token and by `#token=`, a live
 * campaign followed through its batches, paused and resumed from its page, a viewer who sees
 * no buttons, the node list's filters and the audit log. The screenshots the README shows
 * are taken here (docs/img/).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeIdOf } from "../../agent-sim/index.js";
import { CampaignPhase, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type AgentctlResult, agentctl } from "../helpers/agentctl.js";
import { fleetOrderSecret, inReferenceOrder } from "../helpers/canary-order.js";
import { type Browser, launchChromium, SCREENSHOTS } from "../helpers/chromium.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  quickSpec,
  waitForCampaign,
} from "../integration/campaign-fixture.js";

const FLEET = 20;
const BATCH_SECONDS = 3;

/** Node ids `prefix-00001`… in the fleet's canary order (no canary labels). */
async function inCanaryOrder(fx: CampaignFixture, prefix: string, n: number): Promise<string[]> {
  const secret = await fleetOrderSecret(fx.tc.database.url);
  return inReferenceOrder(
    Array.from({ length: n }, (_, i) => nodeIdOf(prefix, i)),
    secret,
  );
}

describe("the dashboard in a real browser", { timeout: 60_000 }, () => {
  let fx: CampaignFixture;
  let browser: Browser;
  let context: BrowserContext;
  let ui: string;
  /** Fails in the last batch, where one of ten is under the threshold. */
  let failing = "";
  const pageErrors: string[] = [];
  /** The campaign the live test ran. */
  let campaignId = "";
  /** What `agentctl ui --no-open` printed for the viewer token. */
  let printedLink: AgentctlResult;

  beforeAll(async () => {
    fx = await campaignFixture();
    failing = (await inCanaryOrder(fx, "web", FLEET)).at(-1) ?? "";
    ui = `${fx.tc.adminUrl}/ui/`;
    // What takes seconds runs side by side: the agents, the browser, the real agentctl.
    [, , browser, printedLink] = await Promise.all([
      fx.register(NEW),
      fx.fleet({
        count: FLEET,
        idPrefix: "web",
        poolCount: 2,
        restartMs: [150, 400],
        behaviours: { [failing]: { upgrade: "fail" } },
      }),
      launchChromium(),
      agentctl(["ui", "--no-open"], {
        AGENTCTL_SERVER: fx.tc.adminUrl,
        AGENTCTL_TOKEN: fx.tc.viewerToken,
      }),
    ]);
    context = browser.context;
    await mkdir(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fx?.stop();
  });

  /** A fresh page (own sessionStorage) that records script errors and CSP violations. */
  async function newPage(): Promise<Page> {
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error" && !/status of 40[13]/.test(message.text())) {
        pageErrors.push(message.text());
      }
    });
    return page;
  }

  // The route's every header and status is in test/unit/control/dashboard-route.test.ts;
  // this is the real Control serving the real bundle.
  it("serves /ui without a token, with strict headers, and the API still wants one", async () => {
    const index = await fetch(ui);
    expect(index.status).toBe(200);
    expect(index.headers.get("cache-control")).toBe("no-store");
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect(index.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await index.text();
    expect(html).not.toContain(fx.tc.operatorToken);
    const script = /src="(assets\/main-[0-9a-f]+\.js)"/.exec(html)?.[1];
    const asset = await fetch(`${ui}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    const anonymous = await fetch(
      `${fx.tc.adminUrl}/agentcontrol.admin.v1.CampaignService/ListCampaigns`,
      { method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
    );
    expect(anonymous.status).toBe(401);
  });

  it("refuses a wrong typed token, then signs in with a typed operator token", async () => {
    const page = await newPage();
    await page.goto(ui);
    await page.fill("#token", "not-a-token-of-this-control");
    await page.click("button[type=submit]");
    await expect
      .poll(() => page.textContent("[role=alert]"))
      .toMatch(/refused the token.*unknown admin token/);
    await page.fill("#token", fx.tc.operatorToken);
    await page.click("button[type=submit]");
    await page.waitForSelector(".badge[data-role=operator]");
    await page.waitForSelector("text=No campaign yet");
    // Kept in this tab only: never a cookie, never localStorage.
    expect(await page.evaluate("sessionStorage.length")).toBe(1);
    expect(await page.evaluate("localStorage.length")).toBe(0);
    expect(await context.cookies()).toEqual([]);
    await page.close();
  });

  it("signs in from the #token= link agentctl ui prints, and takes the token out of the address bar", async () => {
    const printed = printedLink;
    expect(printed.stderr).toBe("");
    expect(printed.code).toBe(0);
    const link = printed.stdout.trim();
    expect(link).toBe(`${ui}#token=${fx.tc.viewerToken}`);
    const page = await newPage();
    await page.goto(link);
    await page.waitForSelector(".badge[data-role=viewer]");
    expect(page.url()).toBe(ui);
    expect(await page.evaluate("window.location.href")).not.toContain("token");
    await page.close();
  });

  it("follows a campaign through its batches live, pauses and resumes it; a viewer has no buttons", async () => {
    const spec = quickSpec(NEW, [5, 50, 100], {
      failureThresholdPercent: 20,
      disruptionBudgetPercent: 100,
      reason: "CVE-2026-1234",
      batches: [5, 50, 100].map((percent) => ({
        percent,
        minDuration: { seconds: BigInt(BATCH_SECONDS), nanos: 0 },
      })),
    });
    // Both pages signed in and showing the campaigns before the campaign starts.
    const operator = await newPage();
    await operator.goto(`${ui}#token=${fx.tc.operatorToken}`);
    await operator.waitForSelector(".badge[data-role=operator]");
    const viewer = await newPage();
    await viewer.goto(`${ui}#token=${fx.tc.viewerToken}`);
    await viewer.waitForSelector(".badge[data-role=viewer]");
    // Held in its first batch (paused at once), so a loaded machine cannot outrun the pages.
    const id = (await fx.campaigns.startCampaign({ spec })).campaign?.id ?? "";
    campaignId = id;
    await fx.campaigns.pauseCampaign({ id, reason: "hold for the change window" });
    // The list picks the new campaign up on its own; its link opens the live page.
    await operator.click(`a[href="#/campaigns/${id}"]`, { timeout: 15_000 });
    await operator.waitForSelector(".campaign .live-live");
    await operator.evaluate("window.loadedOnce = true");
    await viewer.goto(`${ui}#/campaigns/${id}`);

    const batch = (page: Page, index: number, state: string) =>
      page.waitForSelector(`[data-batch='${index}'][data-state='${state}']`, { timeout: 20_000 });
    const phase = (page: Page, name: string) =>
      page.waitForSelector(`.campaign-head [data-phase=${name}]`, { timeout: 20_000 });
    await phase(operator, "paused");
    await batch(operator, 0, "running");
    await operator.waitForSelector("[data-batch='0'] >> text=/left \\(paused\\)/");
    // The page says what the batch waits for: the pause, with who paused it and why.
    await operator.waitForSelector(
      ".waits li[data-wait=paused] >> text=/^paused by admin at \\w{3} \\d\\d:\\d\\d UTC: hold for the change window$/",
    );
    // A viewer follows the same campaign and has no buttons.
    await phase(viewer, "paused");
    await batch(viewer, 0, "running");
    expect(await viewer.$$(".actions")).toEqual([]);
    expect(await viewer.$$("button:text-matches('Pause|Resume|Abort|Retry')")).toEqual([]);

    // Resumed from the page, batch 1 passes (its minimum duration over) while the page stays open.
    await operator.click(".actions button:text-is('Resume')");
    await phase(operator, "running");
    await batch(operator, 0, "passed");
    await batch(operator, 1, "running");
    expect(
      await operator.$$eval("[data-batch='0'] .bar", (bars) =>
        bars[0]?.getAttribute("data-succeeded"),
      ),
    ).toBe("1");

    // Paused from the page (in batch 2, or 3 on a slow machine); the viewer's page follows.
    await operator.click(".actions button:text-is('Pause')");
    await phase(operator, "paused");
    expect((await waitForCampaign(fx.campaigns, id, () => true)).phase).toBe(CampaignPhase.PAUSED);
    await phase(viewer, "paused");
    await operator.waitForSelector(
      "li.batch.current >> text=/left \\(paused\\)|minimum duration reached/",
    );

    await operator.click(".actions button:text-is('Resume')");
    await phase(operator, "running");
    await batch(operator, 1, "passed");
    await batch(operator, 2, "passed");
    await phase(operator, "completed");
    await operator.waitForSelector(".live-finished");
    expect(await operator.evaluate("window.loadedOnce")).toBe(true);

    // The last batch: nine succeeded, the failing node under the 20 % threshold, named with its code.
    const last = await operator.$eval("[data-batch='2'] .bar", (bar) => ({
      succeeded: bar.getAttribute("data-succeeded"),
      failed: bar.getAttribute("data-failed"),
    }));
    expect(last).toEqual({ succeeded: "9", failed: "1" });
    // The batch passed: its gauge says so, not how many more failures would breach it.
    expect(await operator.textContent("[data-batch='2'] .gauge-text")).toContain(
      "1 of 10 failed (10.0%), threshold 20%: passed",
    );
    const row = await operator.waitForSelector(`.failing-nodes tr[data-node='${failing}']`);
    expect(await row.textContent()).toContain("apply_failed");
    // A retry is offered of the one node it would take, named with its count.
    expect(await operator.textContent(".actions button:text-matches('^Retry')")).toBe(
      "Retry 1 node",
    );
    const paused = await operator.waitForSelector(".audit-events tr[data-action=pause]");
    expect(await paused.textContent()).toContain("admin");
    await operator.waitForSelector(".audit-events tr[data-action=resume]");
    await operator.screenshot({
      path: join(SCREENSHOTS, "dashboard-campaign.png"),
      fullPage: true,
    });
    const done = await waitForCampaign(fx.campaigns, id);
    expect(done.counts.find((c) => c.state === NodeState.FAILED)?.count).toBe(1);
    await viewer.close();
    await operator.close();
  });

  it("lists nodes with filters by pool, version, online and campaign", async () => {
    const page = await newPage();
    await page.goto(`${ui}#token=${fx.tc.operatorToken}`);
    await page.click("nav a:text-is('Nodes')");
    await page.waitForSelector(`tr[data-node='${failing}']`);
    expect(await page.$$("table.nodes tbody tr")).toHaveLength(FLEET);
    await page.fill("input[name=pool]", "pool-1");
    await expect.poll(async () => (await page.$$("table.nodes tbody tr")).length).toBe(FLEET / 2);
    await page.fill("input[name=pool]", "");
    await page.fill("input[name=version]", NEW);
    await expect.poll(async () => (await page.$$("table.nodes tbody tr")).length).toBe(FLEET - 1);
    await page.selectOption("select[name=online]", "false");
    await page.waitForSelector("text=No node matches");
    await page.selectOption("select[name=online]", "true");
    await page.fill("input[name=version]", "");
    await page.fill("input[name=campaign]", "c-00000000-000000-000000");
    await page.waitForSelector("text=No node matches");
    await page.fill("input[name=campaign]", campaignId);
    await page.waitForSelector(`tr[data-node='${failing}']`);
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-nodes.png"), fullPage: false });
    await page.close();
  });

  it("shows the audit log, filtered by action", async () => {
    const page = await newPage();
    await page.goto(`${ui}#token=${fx.tc.viewerToken}`);
    await page.click("nav a:text-is('Audit log')");
    await page.waitForSelector(".audit-events tr[data-action=start]");
    await page.fill("input[name=action]", "pause");
    await expect
      .poll(() =>
        page.$$eval(".audit-events tbody tr", (rows) =>
          rows.map((r) => r.getAttribute("data-action")),
        ),
      )
      .toEqual(["pause", "pause"]);
    await page.close();
    // No script error and no Content-Security-Policy violation on any page.
    expect(pageErrors).toEqual([]);
  });
});
