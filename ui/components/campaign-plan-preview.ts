/**
 * What PlanCampaign answered for the form, before anything starts: the batches with their
 * nodes, rounds and estimated length, the nodes already up to date, the nodes that will be
 * skipped (by code, with why and which), and when the campaign would end if started now.
 */
import { html } from "htm/preact";
import type { PlanCampaignResponse } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { formatMs, formatTime, msOf } from "../format.js";

const few = (ids: readonly string[]) =>
  ids.length <= 10 ? ids.join(", ") : `${ids.slice(0, 10).join(", ")}, … (${ids.length})`;

/** The plan `plan`. */
export function CampaignPlanPreview({ plan }: { plan: PlanCampaignResponse }) {
  return html`<section class="plan-preview" data-total=${plan.totalNodes}>
    <h3>Plan: ${plan.totalNodes} nodes in ${plan.batches.length} batches</h3>
    <table class="planned-batches">
      <thead><tr><th>Batch</th><th>Up to</th><th>Nodes</th><th>Min. duration</th><th>Rounds</th><th>Estimated</th><th>First nodes</th></tr></thead>
      <tbody>
        ${plan.batches.map(
          (
            b,
          ) => html`<tr key=${b.index} data-planned-batch=${b.index} data-nodes=${b.nodeIds.length}>
            <td>${b.index + 1}</td>
            <td>${b.percent}%</td>
            <td>${b.nodeIds.length}</td>
            <td>${formatMs(msOf(b.minDuration))}</td>
            <td>${b.rounds}</td>
            <td>${formatMs(msOf(b.shortest))} to ${formatMs(msOf(b.longest))}</td>
            <td class="muted">${few(b.nodeIds)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${plan.upToDateNodeIds.length > 0 && html`<p class="up-to-date">Already on the target (done at once): ${few(plan.upToDateNodeIds)}</p>`}
    ${
      plan.skipped.length > 0 &&
      html`<ul class="planned-skips">
        ${plan.skipped.map(
          (s) => html`<li key=${s.code} data-skip=${s.code}>
            <strong>${s.nodeIds.length}</strong> skipped as <code>${s.code}</code>: ${s.message} (${few(s.nodeIds)})
          </li>`,
        )}
      </ul>`
    }
    <p class="estimate">
      Estimated end if started now: ${formatTime(plan.earliestEnd)} to ${formatTime(plan.latestEnd)}${" "}<span class="muted">(from nodes back at once to each taking its whole reconnect timeout; failures, gates and other campaigns' load not counted)</span>
    </p>
  </section>`;
}
