/**
 * `agentctl campaign skip-gate ID GATE --reason TEXT` against a real Control: the real binary
 * over the admin API, a real PostgreSQL and simulated agents on real streams. A webhook gate
 * that cannot be reached (a closed port, an hour's grace) holds the first batch; the operator's
 * skip lets that batch pass, the second batch waits for the same gate again, and the audit log
 * names who skipped which gate and why. A viewer may not skip, and nothing is skipped without
 * --yes or without a reason.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchState, NodeState } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../helpers/agentctl.js";
import { type CampaignFixture, campaignFixture, NEW, waitForCampaign } from "./campaign-fixture.js";

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe("agentctl campaign skip-gate", { timeout: 180_000 }, () => {
  let f: CampaignFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    f = await campaignFixture();
    env = { AGENTCTL_SERVER: f.tc.adminUrl, AGENTCTL_TOKEN: f.tc.operatorToken };
    await f.register(NEW);
    await f.fleet({ count: 2, idPrefix: "gate" });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("passes the current batch past an unreachable gate; the next batch waits for it again", async () => {
    const hook = `http://127.0.0.1:${await closedPort()}/hook`;
    const started = await agentctl(
      [
        "campaign",
        "start",
        "--version",
        NEW,
        "--batches",
        "5:0s,100:0s",
        "--gate",
        `webhook ${hook}`,
        "--gate-grace",
        "1h",
        "--yes",
      ],
      env,
    );
    expect(started.stderr).not.toMatch(/error|failed/i);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    // The canary is back and the batch waits for the gate, unreachable within its grace.
    await waitForCampaign(f.campaigns, id, (c) =>
      c.counts.some((n) => n.state === NodeState.VERIFYING && n.count === 1),
    );
    await expect
      .poll(async () => (await agentctl(["campaign", "why", id], env)).stdout, { timeout: 30_000 })
      .toMatch(/gate 1 \(webhook http:\/\/127\.0\.0\.1:\d+\/…\) unreachable for/);

    const viewer = await agentctl(["campaign", "skip-gate", id, "1", "--reason", "x", "--yes"], {
      ...env,
      AGENTCTL_TOKEN: f.tc.viewerToken,
    });
    expect(viewer.code).not.toBe(0);
    expect(viewer.stderr).toMatch(/skip gates/);
    const unconfirmed = await agentctl(["campaign", "skip-gate", id, "1", "--reason", "x"], env);
    expect(unconfirmed).toMatchObject({ code: 2, stdout: "" });
    expect(unconfirmed.stderr).toMatch(/not skipped: no terminal to confirm on; pass --yes/);
    const reasonless = await agentctl(["campaign", "skip-gate", id, "1", "--yes"], env);
    expect(reasonless.code).toBe(2);
    expect(reasonless.stderr).toMatch(/--reason is required/);
    const noSuchGate = await agentctl(
      ["campaign", "skip-gate", id, "2", "--reason", "x", "--yes"],
      env,
    );
    expect(noSuchGate.code).not.toBe(0);
    expect(noSuchGate.stderr).toMatch(/has gates 1 to 1; there is no gate 2/);
    const held = await f.campaigns.getCampaign({ id, summaryOnly: true });
    expect(held.campaign?.currentBatch).toBe(0);

    const skipped = await agentctl(
      ["campaign", "skip-gate", id, "1", "--reason", "hook host is down", "--yes"],
      env,
    );
    expect(skipped).toMatchObject({ code: 0, stderr: "" });
    expect(skipped.stdout).toMatch(
      new RegExp(`^campaign ${id}: gate 1 skipped for its current batch; now batch [12] of 2`),
    );

    // Batch 1 passed on the skip; batch 2's node comes back and waits for the gate again.
    const second = await waitForCampaign(
      f.campaigns,
      id,
      (c) =>
        c.currentBatch === 1 &&
        c.counts.some((n) => n.state === NodeState.VERIFYING && n.count === 1),
    );
    expect(second.batches[0]?.state).toBe(BatchState.PASSED);
    await expect
      .poll(async () => (await agentctl(["campaign", "why", id], env)).stdout, { timeout: 30_000 })
      .toMatch(
        /batch 2 of 2 waits for:\n(.*\n)* {2}- gate 1 \(webhook http:\/\/127\.0\.0\.1:\d+\/…\)( unreachable for|: no result)/,
      );

    const audit = await f.audit.listAuditEvents({ campaignId: id });
    const row = audit.events.find((e) => e.action === "skip_gate");
    expect(row?.message).toBe(`campaign ${id}: skip gate 1: hook host is down`);
    expect(row?.actor).not.toBe("control");
    expect(row?.actor).not.toBe("");

    await agentctl(["campaign", "abort", id, "--yes"], env);
  });
});
