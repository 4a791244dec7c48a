/**
 * The fleet page, the campaign page's schedule, plan and gates, and starting a campaign from
 * the page, in a real browser (Debian's Chromium driven by playwright-core) against a real
 * Control (real PostgreSQL, the admin API over HTTP) with simulated agents on real streams.
 * The fleet page's screenshots and the start form's are taken here (docs/img/).
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeIdOf } from "../../agent-sim/index.js";
import {
  DesiredVersionService,
  PlanService,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { type Browser, launchChromium, SCREENSHOTS } from "../helpers/chromium.js";
import {
  type CampaignFixture,
  campaignFixture,
  NEW,
  quickSpec,
} from "../integration/campaign-fixture.js";

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

describe("the fleet page, a campaign's schedule and the start form in a real browser", {
  timeout: 90_000,
}, () => {
  let fx: CampaignFixture;
  let browser: Browser;
  let ui: string;
  const pageErrors: string[] = [];
  /** Fails its convergence: the desired version of pool db halts. */
  const failing = nodeIdOf("db", 2);
  /** Lacks upgrade.v1: the plan skips it. */
  const noCap = nodeIdOf("api", 4);
  /** The plan's window opens on the day after tomorrow (UTC): closed now, whatever the hour. */
  const day = DAYS[(new Date().getUTCDay() + 2) % 7] as string;
  let planId = "";
  let webCampaign = "";

  beforeAll(async () => {
    fx = await campaignFixture({ worker: { intervalMs: 200, convergenceIntervalMs: 300 } });
    ui = `${fx.tc.adminUrl}/ui/`;
    [, , , , , browser] = await Promise.all([
      fx.register(NEW),
      fx.fleet({
        count: 3,
        idPrefix: "db",
        labels: { pool: "db" },
        behaviours: { [failing]: { upgrade: "fail" } },
      }),
      fx.fleet({ count: 4, idPrefix: "web", labels: { pool: "web" } }),
      fx.fleet({ count: 2, idPrefix: "edge", labels: { pool: "edge" } }),
      fx.fleet({
        count: 5,
        idPrefix: "api",
        labels: { pool: "api" },
        behaviours: { [noCap]: { upgrade: "no-upgrade-cap" } },
      }),
      launchChromium(),
    ]);
    await fx.tc.client(DesiredVersionService).setDesiredVersion({
      targetVersion: NEW,
      selector: { pools: ["db"] },
      maxFailures: 1,
      disruptionBudgetPercent: 100,
      reason: "db to 2.0.0",
    });
    const plans = fx.tc.client(PlanService);
    const started = await plans.startPlan({
      template: quickSpec(NEW, [5, 100], { windows: [`${day} 02:00-03:00 UTC`], reason: "staged" }),
      groups: ["web", "edge"].map((pool) => ({ name: pool, selector: { pools: [pool] } })),
      wait: { seconds: 60n, nanos: 0 },
    });
    planId = started.plan?.id ?? "";
    const deadline = Date.now() + 30_000;
    while (webCampaign === "" && Date.now() < deadline) {
      webCampaign = (await plans.getPlan({ id: planId })).plan?.groups[0]?.campaignId ?? "";
      if (webCampaign === "") await new Promise((r) => setTimeout(r, 100));
    }
    expect(webCampaign).not.toBe("");
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fx?.stop();
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

  it("shows nodes by version and pool, a halted desired version with its failures, the plan's groups and the live campaign's next event", async () => {
    const page = await signedIn(fx.tc.viewerToken, "viewer");
    await page.click("nav a:text-is('Fleet')");
    expect(page.url()).toBe(`${ui}#/fleet`);
    const halted = await page.waitForSelector(".desired tr[data-state=halted]", {
      timeout: 30_000,
    });
    expect(await halted.textContent()).toContain(`failed: ${failing}`);
    expect(await halted.$eval(".halted-reason", (p) => p.textContent)).toMatch(
      new RegExp(
        `^convergence to 2\\.0\\.0 halted: 1 node\\(s\\) failed \\(${failing}\\), the limit is 1 \\(`,
      ),
    );
    expect(await halted.$eval("li[data-reason=halted]", (li) => li.textContent)).toBe(
      `1 convergence halted: not offered until the desired version is set again (${failing})`,
    );
    expect(await halted.$eval("td:nth-child(4)", (td) => td.textContent)).toBe("2 / 31 behind");
    expect(await page.$eval(".fleet-total", (p) => [p.dataset.nodes, p.dataset.online])).toEqual([
      "14",
      "14",
    ]);
    const bar = (version: string) =>
      page.$eval(`svg.version-chart g[data-version='${version}']`, (g) => [
        g.getAttribute("data-nodes"),
        g.getAttribute("data-online"),
      ]);
    expect(await bar("1.0.0")).toEqual(["12", "12"]);
    expect(await bar(NEW)).toEqual(["2", "2"]);
    const pools = await page.$$eval("table.pools tbody tr", (rows) =>
      rows.map((r) => r.getAttribute("data-pool")),
    );
    expect(pools).toEqual(["api", "db", "edge", "web"]);
    // Pool, nodes, online, offline, revoked, disabled.
    expect(
      await page.$$eval("tr[data-pool=web] td", (tds) => tds.map((td) => td.textContent)),
    ).toEqual(["web", "4", "4", "0", "0", "0"]);

    const plan = await page.waitForSelector(`.plan[data-plan='${planId}'][data-phase=running]`);
    expect(await plan.$eval("li[data-group=web] a", (a) => a.getAttribute("href"))).toBe(
      `#/campaigns/${webCampaign}`,
    );
    expect(await plan.$eval("li[data-group=edge]", (li) => li.textContent)).toMatch(/waiting$/);
    const next = await page.waitForSelector(
      `tr[data-campaign='${webCampaign}'] td.next-event[data-wait=window_closed]`,
    );
    expect(await next.textContent()).toBe(`window closed: opens ${day} 02:00 UTC`);
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-fleet.png"), fullPage: true });

    // The campaign page: its windows with their next opening, and the plan it belongs to.
    await page.click(`tr[data-campaign='${webCampaign}'] a`);
    await page.waitForSelector(".campaign .live-live");
    expect(await page.textContent(".plan-link")).toBe(
      `Part of rollout plan ${planId} (running): group 1 of 2, web`,
    );
    expect(await page.$$eval("ul.windows li", (li) => li.map((l) => l.textContent))).toEqual([
      `${day} 02:00-03:00 UTC`,
    ]);
    expect(await page.textContent(".window-state[data-open=false]")).toMatch(
      /^Closed: nothing new is offered; opens \d{4}-\d\d-\d\d \d\d:\d\d:00 UTC$/,
    );
    await page.waitForSelector(".waits li[data-wait=window_closed]");
    expect(await page.$$("table.gates")).toEqual([]);
    await page.close();
  });

  it("lets an operator plan a campaign in the form, shows the plan before anything starts, and starts it on confirmation", async () => {
    const viewer = await signedIn(fx.tc.viewerToken, "viewer");
    expect(await viewer.$$("a:text-is('Start a campaign')")).toEqual([]);
    await viewer.goto(`${ui}#/campaigns/new`);
    await viewer.waitForSelector("text=Starting a campaign needs an operator's token");
    expect(await viewer.$$("form.start-form")).toEqual([]);
    await viewer.close();

    const page = await signedIn(fx.tc.operatorToken, "operator");
    const before = (await fx.campaigns.listCampaigns({})).campaigns.length;
    await page.click("a:text-is('Start a campaign')");
    expect(page.url()).toBe(`${ui}#/campaigns/new`);
    // The target is chosen among the registered releases.
    await page.waitForSelector(`select[name=version] option[value='${NEW}']`, {
      state: "attached",
    });
    await page.selectOption("select[name=version]", NEW);
    // A field that cannot be read is named at once; nothing is asked of Control.
    await page.fill("input[name=batches]", "5:30,100");
    await page.click("button:text-is('Plan')");
    expect(await page.textContent("[role=alert][data-field=batches]")).toBe(
      '"30" is not a duration such as 30m, 1h30m or 45s',
    );
    expect(await page.getAttribute("input[name=batches]", "aria-invalid")).toBe("true");
    // Control's refusal is shown as Control words it.
    await page.fill("input[name=batches]", "");
    await page.fill("textarea[name=windows]", "Someday 02:00-03:00 UTC");
    await page.click("button:text-is('Plan')");
    await expect
      .poll(() => page.textContent("p.error[role=alert]"))
      .toMatch(/^InvalidArgument: .*window "Someday 02:00-03:00 UTC"/);
    await page.fill("textarea[name=windows]", "");

    // The download budget and the deferral limit are read as agentctl reads their flags.
    await page.fill("input[name=maxDownloads]", "0");
    await page.click("button:text-is('Plan')");
    expect(await page.textContent("[role=alert][data-field=maxDownloads]")).toBe(
      '"0" is not a whole number from 1 to 1000000',
    );
    expect(await page.getAttribute("input[name=maxDownloads]", "aria-invalid")).toBe("true");
    await page.fill("input[name=maxDownloads]", "2");
    await page.fill("input[name=pools]", "api");
    await page.fill("input[name=reason]", "from the form");
    await page.fill("textarea[name=gates]", "prometheus http://127.0.0.1:1 up");
    await page.click("details.start-more summary");
    await page.fill("input[name=maxDefer]", "169h");
    await page.click("button:text-is('Plan')");
    expect(await page.textContent("[role=alert][data-field=maxDefer]")).toBe(
      '"169h" is more than 168h (7 days)',
    );
    await page.fill("input[name=maxDefer]", "2h");
    await page.fill("input[name=ramp]", "1/min×2");
    await page.fill("input[name=rampStep]", "1m");
    await page.fill("input[name=gateGrace]", "1h");
    await page.click("button:text-is('Plan')");
    const preview = await page.waitForSelector(".plan-preview");
    expect(await preview.getAttribute("data-total")).toBe("5");
    expect(
      await preview.$eval("li[data-skip=upgrade_unsupported]", (li) => li.textContent),
    ).toContain(noCap);
    expect(await preview.$$("tr[data-planned-batch]")).not.toHaveLength(0);
    expect(await preview.textContent()).toMatch(/Estimated end if started now: \d{4}-/);
    // Planned only: nothing started.
    expect((await fx.campaigns.listCampaigns({})).campaigns).toHaveLength(before);
    // A change withdraws the plan; planning again shows it again.
    await page.fill("input[name=reason]", "from the start form");
    await page.waitForSelector(".plan-preview", { state: "detached" });
    await page.click("button:text-is('Plan')");
    await page.waitForSelector(".plan-preview");
    await page.click("button:text-is('Start this campaign…')");
    await page.waitForSelector(".confirm >> text=Start the campaign of 2.0.0 on 5 nodes now?");
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-start.png"), fullPage: true });
    expect((await fx.campaigns.listCampaigns({})).campaigns).toHaveLength(before);

    await page.click("button:text-is('Confirm and start')");
    await page.waitForSelector(".campaign .live-live");
    const id = /#\/campaigns\/(.+)$/.exec(page.url())?.[1] ?? "";
    const started = (await fx.campaigns.getCampaign({ id, summaryOnly: true })).campaign;
    expect(started?.spec?.reason).toBe("from the start form");
    expect(started?.spec?.selector?.pools).toEqual(["api"]);
    expect(started?.spec?.maxDownloads).toBe(2);
    expect(started?.spec?.maxDefer?.seconds).toBe(7200n);
    expect(
      await page.$eval(".ramp", (p) => [
        p.dataset.steps,
        p.textContent?.replace(/\s+/g, " ").trim(),
      ]),
    ).toEqual([
      String(started?.batches.length),
      `1/min ×2, each step at least 1m0s: ${started?.batches.length} steps (the batches below)`,
    ]);
    expect(await page.$$("li.batch")).toHaveLength(started?.batches.length ?? -1);
    // The budgets the form sent are the campaign's settings on its page.
    const settings = Object.fromEntries(
      await page.$$eval("dl.settings dt", (dts) =>
        dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]),
      ),
    );
    expect(settings).toMatchObject({ "Downloads at once": "2", "Max defer": "2h0m" });
    // The gate is judged once the first step settled: unreachable, within its hour of grace.
    const gate = await page.waitForSelector("tr[data-gate='0'][data-status=unreachable]", {
      timeout: 30_000,
    });
    expect(await gate.getAttribute("data-failing")).toBe("false");
    expect(await gate.$$eval("td", (td) => td.map((t) => t.textContent))).toEqual([
      "1",
      "prometheus http://127.0.0.1:1 up",
      "unreachable",
      "unreachable",
      expect.stringMatching(/^\d{4}-\d\d-\d\d /),
      "1h0m",
    ]);
    await page.waitForSelector(".waits li[data-wait=gate_unreachable]");
    expect(await page.$$(".windows-none")).toHaveLength(1);
    await page.screenshot({
      path: join(SCREENSHOTS, "dashboard-campaign-schedule.png"),
      fullPage: true,
    });
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
