/**
 * The desired-version and plan commands of the admin API (desired set and clear, plan start
 * and abort) on a real Control and database: the audit row each writes and the error each
 * refusal gives, with nothing written then.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DesiredVersionService,
  PlanService,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { type CampaignFixture, campaignFixture, NEW, quickSpec } from "./campaign-fixture.js";

describe("desired set and clear, plan start and abort", { timeout: 150_000 }, () => {
  let fx: CampaignFixture;
  let sql: pg.Client;
  beforeAll(async () => {
    fx = await campaignFixture({
      worker: { intervalMs: 200, convergenceIntervalMs: 300 },
      policy: { minBatchDurationSeconds: 0, firstBatchMaxPercent: 100 },
    });
    await fx.register(NEW);
    sql = new pg.Client({ connectionString: fx.tc.database.url });
    await sql.connect();
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    await fx?.stop();
  });

  const audits = async (prefix: string) =>
    (
      await sql.query<{
        actor: string;
        action: string;
        campaign_id: string | null;
        node_id: string | null;
        message: string;
        detail: Record<string, unknown>;
      }>(
        `select actor, action, campaign_id, node_id, message, detail from audit_events
          where action like $1 order by id`,
        [`${prefix}.%`],
      )
    ).rows;
  const refusal = async (call: Promise<unknown>) =>
    await call.then(
      () => {
        throw new Error("accepted");
      },
      (e: unknown) => {
        const error = ConnectError.from(e);
        return { code: error.code, message: error.rawMessage };
      },
    );

  it("sets and clears a desired version with one audit row each, and refuses bad requests", async () => {
    const desired = fx.tc.client(DesiredVersionService);
    expect(await refusal(desired.setDesiredVersion({ targetVersion: " " }))).toEqual({
      code: Code.InvalidArgument,
      message: "target_version is required",
    });
    expect(
      await refusal(desired.setDesiredVersion({ targetVersion: NEW, maxFailures: 0 })),
    ).toEqual({
      code: Code.InvalidArgument,
      message: "max_failures must be an integer from 1 to 100, not 0",
    });
    expect(
      await refusal(
        desired.setDesiredVersion({ targetVersion: NEW, disruptionBudgetPercent: 101 }),
      ),
    ).toEqual({
      code: Code.InvalidArgument,
      message: "disruption_budget_percent must be an integer from 0 to 100, not 101",
    });
    expect(await refusal(desired.setDesiredVersion({ targetVersion: "9.9.9" }))).toEqual({
      code: Code.NotFound,
      message: "release 9.9.9 is not registered (agentctl release register)",
    });
    const set = await desired.setDesiredVersion({
      targetVersion: NEW,
      selector: { pools: ["edge"] },
      reason: "edge first",
    });
    const id = set.desired?.id ?? "";
    expect(set.desired).toMatchObject({ targetVersion: NEW, maxFailures: 3 });
    await desired.clearDesiredVersion({ id });
    expect(await refusal(desired.clearDesiredVersion({ id }))).toEqual({
      code: Code.NotFound,
      message: `no desired version with id "${id}"`,
    });
    expect(await audits("desired")).toEqual([
      {
        actor: "admin",
        action: "desired.set",
        campaign_id: id,
        node_id: null,
        message: `desired version ${id} set to ${NEW}: edge first`,
        detail: {
          desiredId: id,
          version: NEW,
          selector: { labels: {}, pools: ["edge"], nodeIds: [] },
          exclude: { nodeIds: [], tags: {} },
          reason: "edge first",
        },
      },
      {
        actor: "admin",
        action: "desired.clear",
        campaign_id: id,
        node_id: null,
        message: `desired version ${id} cleared: its nodes no longer converge`,
        detail: {},
      },
    ]);
  });

  it("starts and aborts a plan with one audit row each, and refuses bad requests", async () => {
    const plans = fx.tc.client(PlanService);
    const template = quickSpec(NEW, [100], { reason: "quarterly" });
    const bad = await refusal(plans.startPlan({ template, groups: [] }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.message).toMatch(/^the plan is not valid: /);
    const started = await plans.startPlan({
      template,
      groups: ["dev", "prod"].map((pool) => ({ name: pool, selector: { pools: [pool] } })),
      wait: { seconds: 3600n, nanos: 0 },
    });
    const id = started.plan?.id ?? "";
    expect(started.plan?.phase).toBe("running");
    const aborted = await plans.abortPlan({ id, reason: "freeze" });
    expect(aborted.plan).toMatchObject({ phase: "aborted", message: "aborted: freeze" });
    expect(await refusal(plans.abortPlan({ id }))).toEqual({
      code: Code.FailedPrecondition,
      message: `plan ${id} is aborted; only a running plan can be aborted`,
    });
    expect(await refusal(plans.abortPlan({ id: "p-none" }))).toEqual({
      code: Code.NotFound,
      message: 'no plan with id "p-none"',
    });
    expect(await audits("plan")).toEqual([
      {
        actor: "admin",
        action: "plan.start",
        campaign_id: id,
        node_id: null,
        message: `plan ${id} started: ${NEW} over dev → prod, 3600 s between groups: quarterly`,
        detail: { groups: ["dev", "prod"], waitMs: 3_600_000, targetVersion: NEW },
      },
      {
        actor: "admin",
        action: "plan.abort",
        campaign_id: id,
        node_id: null,
        message: `plan ${id} aborted: freeze`,
        detail: {},
      },
    ]);
  });
});
