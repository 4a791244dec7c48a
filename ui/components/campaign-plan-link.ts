/**
 * The rollout plan a campaign belongs to, when it is one plan group's campaign: the plan,
 * the group and its place among the plan's groups, linked to the fleet page's plans.
 */
import { html } from "htm/preact";
import { hrefOf } from "../hash-route.js";
import { useSession } from "../session.js";
import { usePoll } from "../use-poll.js";

/** A line naming the plan and group of campaign `id`; nothing when it has none. */
export function CampaignPlanLink({ id }: { id: string }) {
  const { api } = useSession();
  const { data } = usePoll((signal) => api.plans.listPlans({}, { signal }), [api], 30_000);
  for (const plan of data?.plans ?? []) {
    const index = plan.groups.findIndex((g) => g.campaignId === id);
    const group = plan.groups[index];
    if (!group) continue;
    return html`<p class="plan-link" data-plan=${plan.id}>
      Part of rollout plan <a href=${hrefOf({ page: "fleet" })}><strong>${plan.id}</strong></a> (${plan.phase}): group ${index + 1} of ${plan.groups.length}, <strong>${group.name}</strong>
    </p>`;
  }
  return null;
}
