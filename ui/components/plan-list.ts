/**
 * Rollout plans, newest first: each with its phase, its groups in order (selector, campaign,
 * outcome) and, while it waits between groups, when the next one may start.
 */
import { html } from "htm/preact";
import type { RolloutPlan } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { formatTime } from "../format.js";
import { hrefOf } from "../hash-route.js";
import { formatSelector } from "../selector.js";

/** The plans; a line saying there are none. */
export function PlanList({ plans }: { plans: readonly RolloutPlan[] }) {
  if (plans.length === 0) return html`<p class="muted">No rollout plan.</p>`;
  return html`<div class="plans">
    ${plans.map(
      (p) => html`<div class="plan" key=${p.id} data-plan=${p.id} data-phase=${p.phase}>
        <p>
          <strong>${p.id}</strong> ${p.template?.targetVersion} · <span class=${`plan-phase ${p.phase}`}>${p.phase}</span> · by ${p.createdBy} at ${formatTime(p.createdAt)}${p.nextGroupAt && html` · next group at ${formatTime(p.nextGroupAt)}`}${p.message && html` · ${p.message}`}
        </p>
        <ol class="groups">
          ${p.groups.map(
            (
              g,
              i,
            ) => html`<li key=${g.name} data-group=${g.name} class=${i === p.currentGroup && p.phase === "running" ? "current" : ""}>
              <strong>${g.name}</strong> ${formatSelector(g.selector)}${g.campaignId && html` · <a href=${hrefOf({ page: "campaign", id: g.campaignId })}>${g.campaignId}</a>`}${g.outcome ? html` · <span class="outcome">${g.outcome}</span>` : g.campaignId ? " · running" : " · waiting"}
            </li>`,
          )}
        </ol>
      </div>`,
    )}
  </div>`;
}
