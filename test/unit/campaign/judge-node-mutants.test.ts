/**
 * Judging one node, beyond its states: what each transition records on the node (its message,
 * the version it came back on, its boot ids) and says in the decision's log, which reports and
 * boots move an offered node and which do not, and when a node back on the target is still
 * watched.
 */
import { describe, expect, it } from "vitest";
import type { CampaignNode, CampaignSpecInput } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  batchIds,
  bringBack,
  configFails,
  fleet,
  goOffline,
  goReconnecting,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sendFails,
  start,
  tick,
} from "./harness.js";

const ID = "node-000";
const oneSlowBatch: Partial<CampaignSpecInput> = {
  batches: [{ percent: 100, minDurationMs: 30 * MIN }],
  failureThresholdPercent: 100,
  disruptionBudgetPercent: 100,
};

/** One node, offered at t=0, in one batch of 30 minutes that tolerates every failure. */
function offered(capabilities = ["upgrade.v1"]): Harness {
  const h = start(fleet(1, { capabilities: () => capabilities }), oneSlowBatch);
  tick(h);
  expect(nodeOf(h, ID).state).toBe("offered");
  return h;
}

function reasons(h: Harness): readonly string[] {
  return h.last?.reasons ?? [];
}

describe("what a failed upgrade records", () => {
  const cases: {
    name: string;
    script: (h: Harness) => void;
    node: Partial<CampaignNode>;
    reason: string;
  }[] = [
    {
      name: "an offer that could not be sent",
      script: (h) => sendFails(h, ID),
      node: {
        state: "failed",
        code: "offer_failed",
        message: "could not send the offer: stream closed",
      },
      reason: `node ${ID}: offered → failed: offer not delivered`,
    },
    {
      name: "a refusal",
      script: (h) => report(h, ID, "REFUSED"),
      node: { state: "failed", code: "rejected", message: "refused the upgrade: refused" },
      reason: `node ${ID}: offered → failed: refused`,
    },
    {
      name: "a failure to apply",
      script: (h) => report(h, ID, "FAILED"),
      node: {
        state: "failed",
        code: "apply_failed",
        message: "failed to apply the upgrade: failed",
      },
      reason: `node ${ID}: offered → failed: apply failed`,
    },
    {
      name: "a health check that failed on the new version",
      script: (h) =>
        report(h, ID, "FAILED", "upgrade", {
          code: "health_check_failed",
          message:
            '2.0.0 failed health check "api" (GET http://127.0.0.1:8080/) answered status 503; reverted to 1.0.0',
        }),
      node: {
        state: "failed",
        code: "health_check_failed",
        message:
          '2.0.0 failed health check "api" (GET http://127.0.0.1:8080/) answered status 503; reverted to 1.0.0',
      },
      reason: `node ${ID}: offered → failed: failed its health checks`,
    },
    {
      name: "a reinstatement by the agent",
      script: (h) => report(h, ID, "REINSTATED"),
      node: {
        state: "failed",
        code: "reverted",
        message: "reinstated its previous release: reinstated",
      },
      reason: `node ${ID}: offered → failed: reverted by the agent`,
    },
    {
      name: "a node back on its old version after accepting",
      script: (h) => {
        report(h, ID, "ACCEPTED");
        reboot(h, ID, OLD);
      },
      node: {
        state: "failed",
        code: "reverted",
        version: OLD,
        message: `came back on ${OLD}, not ${NEW}`,
      },
      reason: `node ${ID}: offered → failed: came back on another version`,
    },
    {
      name: "a node back on a version it does not say",
      script: (h) => {
        report(h, ID, "RESTARTING");
        reboot(h, ID, OLD);
        h.facts.set(ID, { ...h.facts.get(ID)!, agentVersion: undefined });
      },
      node: {
        state: "failed",
        code: "reverted",
        version: undefined,
        message: `came back on an unknown version, not ${NEW}`,
      },
      reason: `node ${ID}: offered → failed: came back on another version`,
    },
  ];
  it.each(cases)("$name", ({ script, node, reason }) => {
    const h = offered();
    script(h);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ ...node, finishedAt: h.now });
    expect(reasons(h)).toContain(reason);
  });

  it("a node that stopped heartbeating while upgrading times out, saying how long it waited", () => {
    const h = offered();
    report(h, ID, "DOWNLOADING");
    goReconnecting(h, ID);
    advance(h, 10 * MIN);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "timed_out",
      code: "reconnect_timeout",
      message: "stopped heartbeating while upgrading and was not back within 10 minutes",
    });
    expect(reasons(h)).toContain(`node ${ID}: applying → timed_out: timed out`);
  });

  it("a node of which nothing at all is known times out at its deadline, not before", () => {
    const h = offered();
    h.facts.delete(ID);
    advance(h, 10 * MIN - 1);
    expect(nodeOf(h, ID).state).toBe("offered");
    advance(h, 1);
    expect(nodeOf(h, ID)).toMatchObject({ state: "timed_out", code: "reconnect_timeout" });
  });

  it("a node still heartbeating but not on the target fails at its deadline, saying so", () => {
    const h = offered();
    report(h, ID, "APPLYING");
    advance(h, 10 * MIN);
    expect(reasons(h)).toContain(`node ${ID}: applying → failed: reconnect timeout`);
  });
});

describe("what moves an offered node forward", () => {
  it("back on the target with a new boot id: verifying, recording when and on which boot", () => {
    const h = offered(["upgrade.v1", "config.v1"]);
    h.now = 3 * MIN;
    reboot(h, ID, NEW);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "verifying",
      version: NEW,
      backAt: 3 * MIN,
      backBootId: `boot-${ID}-1`,
      graceEndsAt: 4 * MIN,
      finishedAt: undefined,
    });
    expect(reasons(h)).toContain(
      `node ${ID}: offered → verifying: back on ${NEW} with a new boot id`,
    );
  });

  it("a restart before acknowledging the offer keeps it offered, now on the new boot", () => {
    const h = offered();
    reboot(h, ID, OLD);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "offered", offerBootId: `boot-${ID}-1` });
    expect(reasons(h)).toContain(
      `node ${ID}: offered → offered: restarted before acknowledging the offer; offered again`,
    );
    expect(h.last?.actions).toEqual([]);
  });

  it("a report from the boot it restarted on is the offer in progress, not a revert", () => {
    const h = offered();
    reboot(h, ID, OLD);
    report(h, ID, "ACCEPTED");
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "applying", offerBootId: `boot-${ID}-1` });
  });

  it("a boot on its old version while applying is a revert, even with a report from that boot", () => {
    const h = offered();
    report(h, ID, "APPLYING");
    tick(h);
    reboot(h, ID, OLD);
    report(h, ID, "APPLYING");
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });

  it("refuses a report phase it does not know", () => {
    const h = offered();
    report(h, ID, "BOGUS" as never);
    expect(() => tick(h)).toThrow(/observed phase/);
  });

  it("a progress report moves it to applying, saying which", () => {
    const h = offered();
    report(h, ID, "DOWNLOADING");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("applying");
    expect(reasons(h)).toContain(`node ${ID}: offered → applying: reported DOWNLOADING`);
  });

  it("a restart announced while applying moves it to restarting", () => {
    const h = offered();
    report(h, ID, "APPLYING");
    tick(h);
    report(h, ID, "RESTARTING");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("restarting");
    expect(reasons(h)).toContain(`node ${ID}: applying → restarting: restarting`);
  });

  it("never moves backwards: a progress report after the restart keeps it restarting", () => {
    const h = offered();
    report(h, ID, "RESTARTING");
    tick(h);
    report(h, ID, "APPLYING");
    const d = tick(h);
    expect(nodeOf(h, ID).state).toBe("restarting");
    expect(d.changes.nodes).toEqual([]);
  });

  it("a CONFIRMED report on the upgrade moves nothing by itself", () => {
    const h = offered();
    report(h, ID, "CONFIRMED");
    const d = tick(h);
    expect(nodeOf(h, ID).state).toBe("offered");
    expect(d.changes.nodes).toEqual([]);
  });
});

describe("a node back on the target", () => {
  /** Back on the target at 1 minute, on a config.v1 node (grace until 2 minutes). */
  function back(spec: Partial<CampaignSpecInput> = oneSlowBatch, count = 1): Harness {
    const h = start(fleet(count, { capabilities: () => ["upgrade.v1", "config.v1"] }), spec);
    tick(h);
    h.now = MIN;
    reboot(h, ID, NEW);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "verifying", graceEndsAt: 2 * MIN });
    return h;
  }

  function configFailure(h: Harness, at: number, bootId: string): void {
    const f = h.facts.get(ID)!;
    h.facts.set(ID, {
      ...f,
      configFailures: [...f.configFailures, { at, bootId, message: "bad config" }],
    });
  }

  it("a config failure records its message and says so", () => {
    const h = back();
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "config_apply_failed",
      message: `configuration failed on ${NEW}: bad config`,
    });
    expect(reasons(h)).toContain(`node ${ID}: verifying → failed: config failed`);
  });

  it("a config failure from another boot before the offer is not this upgrade's", () => {
    const h = back();
    h.nodes = h.nodes.map((n) => (n.nodeId === ID ? { ...n, offeredAt: 10 } : n));
    configFailure(h, 9, "an-earlier-boot");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("verifying");
    configFailure(h, 10, "an-earlier-boot");
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("is still within its grace one millisecond before it ends", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "stop" }, 2);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    expect(h.campaign.batches[0]?.state).toBe("breached");
    h.now = 2 * MIN - 1;
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("a new boot on another version after reaching the target is a revert, recording the version", () => {
    const h = back();
    advance(h, MIN);
    reboot(h, ID, OLD);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "reverted",
      version: OLD,
      message: `restarted on ${OLD} after reaching ${NEW}`,
    });
    expect(reasons(h)).toContain(`node ${ID}: verifying → failed: reverted after success`);
  });

  it("a revert to a version it does not say is named so", () => {
    const h = back();
    reboot(h, ID, OLD);
    h.facts.set(ID, { ...h.facts.get(ID)!, agentVersion: undefined });
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "failed",
      code: "reverted",
      version: undefined,
      message: `restarted on an unknown version after reaching ${NEW}`,
    });
  });

  it("only a new boot is a revert: facts naming the boot it came back on or its boot before the upgrade are not, nor facts without a boot", () => {
    const h = back();
    const f = h.facts.get(ID)!;
    for (const bootId of [f.bootId, "boot-0-0", undefined]) {
      h.facts.set(ID, { ...f, bootId, agentVersion: OLD });
      const d = tick(h);
      expect(nodeOf(h, ID).state).toBe("verifying");
      expect(d.changes.nodes).toEqual([]);
    }
  });

  it("a node of which nothing is known any more stays verifying while its batch runs", () => {
    const h = back();
    h.facts.delete(ID);
    const d = advance(h, 5 * MIN);
    expect(nodeOf(h, ID).state).toBe("verifying");
    expect(d.changes.nodes).toEqual([]);
  });

  it("a new boot on the target again is not a revert", () => {
    const h = back();
    reboot(h, ID, NEW);
    const d = tick(h);
    expect(nodeOf(h, ID).state).toBe("verifying");
    expect(d.changes.nodes).toEqual([]);
  });

  it("is still watched past its grace while its batch is breached and the campaign paused", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "pause" }, 2);
    advance(h, 2 * MIN);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    expect(h.campaign.phase).toBe("paused");
    expect(h.campaign.batches[0]?.state).toBe("breached");
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "config_apply_failed" });
  });

  it("past its grace once its batch can no longer pass, it succeeds unconfirmed and says why", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "stop" }, 2);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("verifying");
    advance(h, MIN);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "succeeded",
      message: `on ${NEW}; the campaign ended before its batch passed, not confirmed`,
    });
    expect(reasons(h)).toContain(
      `node ${ID}: verifying → succeeded: settled after the campaign ended`,
    );
    expect(h.actions.filter((a) => a.kind === "confirm")).toEqual([]);
  });

  it("a config failure once its batch can no longer pass and its grace is over is not judged", () => {
    const h = back({ ...oneSlowBatch, failureThresholdPercent: 0, onBreach: "stop" }, 2);
    const other = batchIds(h, 0).find((id) => id !== ID)!;
    report(h, other, "REFUSED");
    tick(h);
    h.now = 2 * MIN;
    configFails(h, ID);
    tick(h);
    expect(nodeOf(h, ID).state).toBe("succeeded");
  });
});

describe("nodes offline at the deadline", () => {
  it("a node offline while applying times out; one offline after announcing its restart fails", () => {
    const h = start(fleet(2), oneSlowBatch);
    tick(h);
    const [a, b] = batchIds(h, 0) as [string, string];
    report(h, a, "APPLYING");
    report(h, b, "RESTARTING");
    goOffline(h, a);
    goOffline(h, b);
    advance(h, 10 * MIN);
    expect(nodeOf(h, a)).toMatchObject({ state: "timed_out", code: "reconnect_timeout" });
    expect(nodeOf(h, b)).toMatchObject({ state: "failed", code: "reconnect_timeout" });
    bringBack(h, [a, b]);
    const d = tick(h);
    expect(d.changes.nodes).toEqual([]);
  });
});
