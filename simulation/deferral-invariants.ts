/**
 * The invariants of deferral, judged from the simulated agents' own record (`ground-truth.ts`),
 * never from the engine's functions:
 *
 * - DF1: a node whose agent never applied a campaign's upgrade and answered its latest offer
 *   DEFERRED is never failed or timed out in it (a deferral is not a failure), unless the
 *   offer could not be sent at all (`offer_failed`).
 * - DF2: no node is skipped `deferred` before the campaign's max defer has passed since its
 *   agent's first DEFERRED answer to that campaign's upgrade (less the clock tolerance given:
 *   the skip is stamped on the clock of the leader that judged it, the span may begin under
 *   another), nor without any such answer.
 * - DF3: a node skipped `deferred` never applied that campaign's upgrade.
 * - DF4: no agent is sent a campaign's upgrade once the campaign's max defer has passed since
 *   its first DEFERRED answer to it (the node is skipped instead), give or take
 *   {@link JUDGING_SLACK_MS} (Control counts from the decision that judged the answer). Judged
 *   without faults only: a Control that was down judges that first answer when it is back, and
 *   counts from then.
 * - DF5: after a DEFERRED answer, the same upgrade is not sent to that agent again sooner than
 *   the retry time (a minute, or a quarter of the max defer when shorter, at least a second),
 *   less the clock tolerance given: the retry time is stamped on the clock of the leader that
 *   judged the answer, and a leader after a takeover judges it on its own clock
 *   (docs/decisions.md, "How far Controls' clocks may disagree").
 *
 * The max defer and the retry time are the reference's (`reference/deferral.ts`).
 */

import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import { refMaxDeferMs, refRetryMs } from "./reference/deferral.js";

/** How much later than the agent's answer Control may judge it, without faults. */
const JUDGING_SLACK_MS = 10_000;

const upgradeId = (campaignId: string, nodeId: string) => `${campaignId}/${nodeId}/upgrade`;

/**
 * DF1–DF5 over every campaign (DF4 only when `faults` is false: see the file's TSDoc), DF2 and
 * DF5 with `clockToleranceMs`: how far two Controls' clocks may disagree in the run (0 without
 * skew).
 */
export function deferralViolations(
  store: MemoryCampaignStore,
  fleet: SimFleet,
  faults = false,
  clockToleranceMs = 0,
): string[] {
  const found: string[] = [];
  for (const [campaignId, nodes] of store.tables.nodes) {
    const c = store.tables.campaigns.get(campaignId)?.campaign;
    if (c === undefined) continue;
    for (const n of nodes) {
      const agent = fleet.agents.get(n.nodeId);
      if (agent === undefined) continue;
      const id = upgradeId(campaignId, n.nodeId);
      const deferrals = (agent.record.deferrals ?? []).filter((x) => x.operationId === id);
      const applied = (agent.applied.get(id) ?? 0) > 0;
      const lastReport = agent.record.reports.filter((r) => r.operationId === id).at(-1);
      if (
        (n.state === "failed" || n.state === "timed_out") &&
        n.code !== "offer_failed" &&
        !applied &&
        deferrals.length > 0 &&
        lastReport?.phase === "DEFERRED"
      ) {
        found.push(
          `DF1: ${n.nodeId} is ${n.state}/${n.code} in ${campaignId} though it only deferred`,
        );
      }
      const maxDefer = refMaxDeferMs(c.spec);
      const first = deferrals[0]?.at;
      if (deferrals.length > 0) {
        const sends = agent.record.sent.filter((o) => o.id === id);
        for (const d of deferrals) {
          const next = sends.find((o) => o.at > d.at);
          if (next !== undefined && next.at - d.at < refRetryMs(c.spec) - clockToleranceMs)
            found.push(
              `DF5: ${n.nodeId} was sent ${id} again ${next.at - d.at} ms after it answered DEFERRED, sooner than the retry time of ${refRetryMs(c.spec)} ms (clock tolerance ${clockToleranceMs} ms)`,
            );
        }
        const late = sends.find(
          (o) => first !== undefined && o.at > first + maxDefer + JUDGING_SLACK_MS,
        );
        if (!faults && late !== undefined && first !== undefined)
          found.push(
            `DF4: ${n.nodeId} was sent ${id} ${late.at - first} ms after its first deferral, past its max defer of ${maxDefer} ms`,
          );
      }
      if (n.state !== "skipped" || n.code !== "deferred") continue;
      if (first === undefined) {
        found.push(`DF2: ${n.nodeId} is skipped deferred in ${campaignId} but never deferred`);
      } else if ((n.finishedAt ?? 0) - first < maxDefer - clockToleranceMs) {
        found.push(
          `DF2: ${n.nodeId} was skipped deferred in ${campaignId} ${(n.finishedAt ?? 0) - first} ms after its first deferral, before its max defer of ${maxDefer} ms (clock tolerance ${clockToleranceMs} ms)`,
        );
      }
      if (applied)
        found.push(`DF3: ${n.nodeId} is skipped deferred in ${campaignId} but applied its upgrade`);
    }
  }
  return found;
}
