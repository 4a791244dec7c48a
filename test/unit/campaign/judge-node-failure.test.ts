/**
 * Judging one node: what a failed upgrade records on the node (its message, the version it
 * came back on, its boot ids) and says in the decision's log.
 */
import { describe, expect, it } from "vitest";
import type { CampaignNode } from "../../../control/campaign/index.js";
import type { Harness } from "./harness.js";
import {
  advance,
  goReconnecting,
  MIN,
  NEW,
  nodeOf,
  OLD,
  reboot,
  report,
  sendFails,
  tick,
} from "./harness.js";
import { ID, offered, reasons } from "./judge-node-fixture.js";

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
        report(h, ID, "APPLYING");
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
