/**
 * Judging one node from its facts and the time (internal to decide). Each function moves a
 * non-final node at most one step per call; the decision loop calls them until nothing changes.
 */
import { assertNever } from "./assert-never.js";
import { defersCurrentOffer, judgeDeferred } from "./deferral.js";
import type { Draft } from "./draft.js";
import { currentBatch, factsOf, judgedDeadline, updateNode } from "./draft.js";
import type { CampaignNode, ConfigFailure, NodeFacts } from "./model.js";
import { CAP_CONFIG, HEALTH_CHECK_FAILED } from "./model.js";
import { detail, minutes, reportFor, sendFailureFor } from "./reports.js";
import { upgradeHeldBack } from "./resend-rules.js";

/** Judging a node told to roll back lives with the rollback's other rules. */
export { judgeRollback } from "./rollback-verdict.js";

/**
 * The patch of a node that announced its restart: restarting, its reconnect deadline counted
 * again from now (the leader's clock, when it first judges the announcement), never earlier
 * than it was. The reconnect timeout is a time to come back: a node that took most of it to
 * download and apply still has all of it to restart, and holds its slot meanwhile.
 */
function restarting(d: Draft, n: CampaignNode): Partial<CampaignNode> {
  return {
    state: "restarting",
    reconnectDeadline: Math.max(
      n.reconnectDeadline ?? Number.NEGATIVE_INFINITY,
      d.now + d.campaign.spec.reconnectTimeoutMs,
    ),
  };
}

/**
 * Judges a node that was offered the upgrade (offered, applying, restarting), in this order:
 * send failure → failed/offer_failed; REFUSED → failed/rejected; FAILED → failed/apply_failed
 * (failed/health_check_failed, with the agent's message, when the agent's code is that: the
 * release's health checks failed on the new version and the agent reverted it);
 * REINSTATED → failed/reverted; a new boot id on the target → verifying (config grace from now,
 * none without config.v1); a new boot id on another version → failed/reverted (after a grace
 * for the agent's report of why, when it announced the restart: RESTARTING from an earlier
 * boot, judged first if this decision sees both), except while
 * `offered` with no report at all on the upgrade (it restarted before receiving the offer): it
 * stays offered with the new boot id as its offerBootId, same operation id and reconnect
 * deadline, and no new action (the outbox re-sends the offer on reconnect); progress reports
 * (ACCEPTED, DOWNLOADING, VERIFYING, APPLYING → applying; RESTARTING → restarting; never
 * backwards), except that a node an administrator revoked is skipped `node_revoked` first
 * ({@link skipRevoked}); then, at the reconnect deadline (from the offer, and again from the
 * announced restart: {@link restarting}): an offered node online and silent about an offer
 * Control holds back never received it ({@link holdBack}); timed_out when the node is offline and
 * never announced a restart (it stopped heartbeating while running), failed/reconnect_timeout
 * otherwise.
 */
export function judgeUpgrade(d: Draft, n: CampaignNode): void {
  const f = factsOf(d, n.nodeId);
  const sent = sendFailureFor(f, n.upgradeOperationId);
  if (sent !== undefined) {
    updateNode(
      d,
      n,
      {
        state: "failed",
        code: "offer_failed",
        message: `could not send the offer: ${sent.message}`,
      },
      "offer not delivered",
    );
    return;
  }
  const reported = reportFor(f, n.upgradeOperationId);
  // A DEFERRED answer to an earlier offer of the same operation says nothing about this one,
  // nor does one from a node that announced its restart: it applied the upgrade, and a node
  // skipped or waiting as deferred never did (its verdict waits for its boot instead).
  const r =
    reported?.phase === "DEFERRED" && (!defersCurrentOffer(n, reported) || n.state === "restarting")
      ? undefined
      : reported;
  if (r !== undefined) {
    switch (r.phase) {
      case "REFUSED":
        updateNode(
          d,
          n,
          { state: "failed", code: "rejected", message: `refused the upgrade: ${detail(r)}` },
          "refused",
        );
        return;
      case "FAILED":
        updateNode(
          d,
          n,
          r.code === HEALTH_CHECK_FAILED
            ? { state: "failed", code: HEALTH_CHECK_FAILED, message: r.message || r.code }
            : {
                state: "failed",
                code: "apply_failed",
                message: `failed to apply the upgrade: ${detail(r)}`,
              },
          r.code === HEALTH_CHECK_FAILED ? "failed its health checks" : "apply failed",
        );
        return;
      case "REINSTATED":
        updateNode(
          d,
          n,
          {
            state: "failed",
            code: "reverted",
            message: `reinstated its previous release: ${detail(r)}`,
          },
          "reverted by the agent",
        );
        return;
      case "DEFERRED":
        judgeDeferred(d, n, r);
        return;
      case "ACCEPTED":
      case "DOWNLOADING":
      case "VERIFYING":
      case "APPLYING":
      case "RESTARTING":
      case "CONFIRMED":
        break;
      default:
        assertNever(r.phase, "observed phase");
    }
  }
  if (f?.bootId !== undefined && f.bootId !== n.offerBootId) {
    if (f.agentVersion === d.target.version) {
      const grace = f.capabilities.includes(CAP_CONFIG) ? d.campaign.spec.configGraceMs : 0;
      updateNode(
        d,
        n,
        {
          state: "verifying",
          version: f.agentVersion,
          backAt: d.now,
          backBootId: f.bootId,
          graceEndsAt: d.now + grace,
        },
        `back on ${f.agentVersion} with a new boot id`,
      );
    } else if (n.state === "offered" && (r === undefined || r.bootId === f.bootId)) {
      // It said nothing about the offer before this boot: it restarted (crashed) before
      // receiving it, so its old version says nothing about the upgrade. The outbox re-sends the
      // unacknowledged offer on reconnect (a report from this boot is that offer in progress);
      // the deadline stays, so a node that keeps restarting still times out.
      updateNode(
        d,
        n,
        { offerBootId: f.bootId },
        "restarted before acknowledging the offer; offered again",
      );
    } else if (n.state !== "restarting" && r?.phase === "RESTARTING" && r.bootId !== f.bootId) {
      // It announced its restart from the boot before, and this decision sees that report and
      // the new boot at once: the announcement first (the loop judges the node again).
      updateNode(d, n, restarting(d, n), "restarting");
    } else if (n.state === "restarting" && awaitsRevertReport(d, n)) {
      // Back on another version after announcing its restart: its supervisor reverted it, and
      // the agent says why (a failed health check, a crash at start) right after its Welcome.
      if (n.revertSeenAt === undefined) {
        updateNode(d, n, { revertSeenAt: d.now }, "back on another version; awaiting its report");
      }
    } else {
      updateNode(
        d,
        n,
        {
          state: "failed",
          code: "reverted",
          version: f.agentVersion,
          message: `came back on ${f.agentVersion ?? "an unknown version"}, not ${d.target.version}`,
        },
        "came back on another version",
      );
    }
    return;
  }
  if (f?.revoked === true) {
    skipRevoked(d, n);
    return;
  }
  if (r !== undefined) {
    const next =
      r.phase === "RESTARTING" ? "restarting" : r.phase === "CONFIRMED" ? undefined : "applying";
    if (next === "restarting" && n.state !== "restarting") {
      updateNode(d, n, restarting(d, n), "restarting");
      return;
    }
    if (next === "applying" && n.state === "offered") {
      updateNode(d, n, { state: "applying" }, `reported ${r.phase}`);
      return;
    }
  }
  if (n.reconnectDeadline !== undefined && d.now >= judgedDeadline(d, n.reconnectDeadline)) {
    if (n.state === "offered" && r === undefined && f?.online === true) {
      // Online on the boot it was offered on and silent about the offer, which the outbox holds
      // back now: it never received it, so its deadline says nothing about the release.
      const why = upgradeHeldBack(
        {
          phase: d.campaign.phase,
          windows: d.campaign.spec.windows,
          targetYanked: d.yanked !== undefined,
          nodeDisabled: f.disabled,
        },
        d.now,
      );
      if (why !== undefined) {
        holdBack(d, n, why);
        return;
      }
    }
    const within = minutes(d.campaign.spec.reconnectTimeoutMs);
    if (f?.online !== true && n.state !== "restarting") {
      updateNode(
        d,
        n,
        {
          state: "timed_out",
          code: "reconnect_timeout",
          message: `stopped heartbeating while upgrading and was not back within ${within}`,
        },
        "timed out",
      );
    } else {
      updateNode(
        d,
        n,
        {
          state: "failed",
          code: "reconnect_timeout",
          message: `did not reconnect with ${d.target.version} within ${within}`,
        },
        "reconnect timeout",
      );
    }
  }
}

/**
 * Settles an offered node whose offer Control holds back (`upgradeHeldBack`: paused, outside the
 * windows, node disabled, target yanked, campaign aborted or ended) at its reconnect deadline,
 * online and silent about the offer: it never received it (its stream was on a Control that died
 * before delivering it), and a failure would count a release it never got against its batch.
 * While the campaign may still offer (running or paused) it is waiting again, its operation
 * kept: offered afresh, with a new deadline, once the offer may go (or skipped `node_disabled`
 * like any disabled waiting node); otherwise canceled as the campaign's waiting nodes were.
 * An Agent that did hold the offer reports on it once it is offered again.
 */
function holdBack(d: Draft, n: CampaignNode, why: string): void {
  const { phase, code: stop } = d.campaign;
  if (phase === "running" || phase === "paused") {
    updateNode(
      d,
      n,
      {
        state: "waiting",
        reconnectDeadline: undefined,
        offerBootId: undefined,
        message: `never acknowledged the offer, held back since ${why}; offered again once it may go`,
      },
      "offer held back and never acknowledged: waiting again",
    );
    return;
  }
  updateNode(
    d,
    n,
    {
      state: "canceled",
      code: stop === "aborted" || stop === "release_yanked" ? stop : "batch_failed",
      message: `canceled: never acknowledged the offer, held back since ${why}`,
    },
    "offer held back and never acknowledged: canceled",
  );
}

/**
 * An administrator revoked the node while it upgraded: its stream is cut and it cannot come
 * back before `node reset`, so its outcome can no longer be known. An operator's act is not a
 * release failure: skipped `node_revoked`, out of its batch's threshold and denominator. What
 * its agent said before (a report, a Hello on another version) is judged first and counts.
 */
function skipRevoked(d: Draft, n: CampaignNode): void {
  updateNode(
    d,
    n,
    {
      state: "skipped",
      code: "node_revoked",
      message: `revoked by an administrator while ${n.state}; its outcome is unknown and not counted against ${d.target.version}`,
    },
    "revoked",
  );
}

/** How long a node back on another version after its restart has to report why. */
export const REVERT_REPORT_GRACE_MS = 5_000;

/** True while a restarting node back on another version may still report why it reverted. */
function awaitsRevertReport(d: Draft, n: CampaignNode): boolean {
  return n.revertSeenAt === undefined || d.now < n.revertSeenAt + REVERT_REPORT_GRACE_MS;
}

/**
 * True while a verifying node is watched beyond its grace: its batch is the running (or
 * breached-and-paused) current batch of a running or paused campaign.
 */
function watched(d: Draft, n: CampaignNode): boolean {
  const c = d.campaign;
  if (c.phase !== "running" && c.phase !== "paused") return false;
  const b = currentBatch(d);
  return n.batch === b.index && (b.state === "running" || b.state === "breached");
}

/**
 * True when config failure `c` is one of the upgrade's: from a boot of the node on the target —
 * the boot it came back on (`backBootId`), or its boot now when that one is on the target and is
 * not the boot it was offered on — or, from another boot than the offer's, first seen at or after
 * the offer, when the node has an offer boot. The boots decide first because a failure's time is
 * when the leader first saw it: a step back of the leader's clock puts every failure after it
 * before the offer. A deferred node resumed by its Hello on the target has no offer boot
 * (`resumeTakenDelivery`), and a failure of its boot before that Hello, first seen with it, is
 * stamped at the resume's offer time: only its boots on the target count.
 */
function upgradeConfigFailure(d: Draft, n: CampaignNode, f: NodeFacts, c: ConfigFailure): boolean {
  if (c.bootId !== undefined) {
    if (c.bootId === n.backBootId) return true;
    if (c.bootId === f.bootId && f.agentVersion === d.target.version && c.bootId !== n.offerBootId)
      return true;
  }
  // Without an offer boot (a deferred node resumed by its Hello on the target), the boot before
  // that Hello is unknown and its failures are the old release's: only the boots above count.
  if (n.offerBootId === undefined) return false;
  return c.bootId !== n.offerBootId && (n.offeredAt === undefined || c.at >= n.offeredAt);
}

/**
 * Judges a node back on the target. A config failure of the upgrade ({@link upgradeConfigFailure}), while in its
 * grace or while its batch is still watched → failed/config_apply_failed; another new boot on a
 * version other than the target → failed/reverted. Revoked by an administrator → skipped
 * `node_revoked` ({@link skipRevoked}). Past its grace in a campaign whose batch can
 * no longer pass (aborted, stopped) → succeeded, unconfirmed, when online (one away is judged
 * by `judgeAway`: back online, or lost). Otherwise it waits for its batch
 * to pass (the batch makes it succeeded and confirms it).
 */
export function judgeVerifying(d: Draft, n: CampaignNode): void {
  const f = factsOf(d, n.nodeId);
  const inGrace = n.graceEndsAt === undefined || d.now < n.graceEndsAt;
  const isWatched = inGrace || watched(d, n);
  const failure = f?.configFailures.find((c) => upgradeConfigFailure(d, n, f, c));
  if (failure !== undefined && isWatched) {
    updateNode(
      d,
      n,
      {
        state: "failed",
        code: "config_apply_failed",
        message: `configuration failed on ${d.target.version}: ${failure.message}`,
      },
      "config failed",
    );
    return;
  }
  if (
    f?.bootId !== undefined &&
    f.bootId !== n.backBootId &&
    f.bootId !== n.offerBootId &&
    f.agentVersion !== d.target.version
  ) {
    updateNode(
      d,
      n,
      {
        state: "failed",
        code: "reverted",
        version: f.agentVersion,
        message: `restarted on ${f.agentVersion ?? "an unknown version"} after reaching ${d.target.version}`,
      },
      "reverted after success",
    );
    return;
  }
  if (f?.revoked === true) {
    skipRevoked(d, n);
    return;
  }
  // Away (not online): `judgeAway` settles it, back online or lost; never succeeded unseen.
  if (!isWatched && d.campaign.phase !== "rolling_back" && f?.online === true) {
    updateNode(
      d,
      n,
      {
        state: "succeeded",
        message: `on ${d.target.version}; the campaign ended before its batch passed, not confirmed`,
      },
      "settled after the campaign ended",
    );
  }
}
