/** A campaign's phase as a coloured badge. */
import { html } from "htm/preact";
import type { CampaignPhase } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { phaseName } from "../format.js";

/** The badge of `phase`; its `data-phase` is the phase's name. */
export function PhaseBadge({ phase }: { phase: CampaignPhase }) {
  const name = phaseName(phase);
  return html`<span class=${`badge phase-${name}`} data-phase=${name}>${name.replace("_", " ")}</span>`;
}
