/**
 * The sentence of each admission refusal (`admit.ts`): the same words for an administrator's
 * start, a plan's halted group and a convergence pass's log.
 */
import type { AdmissionRefusal } from "./admit.js";
import { assertNever } from "./assert-never.js";

/** How many nodes a message names before "and N more". */
export const NAMED_IN_MESSAGE = 50;

/** A sentence a person can act on, saying why the campaign cannot start. */
export function refusalMessage(r: AdmissionRefusal): string {
  switch (r.kind) {
    case "invalid_spec":
      return `the campaign is not valid: ${r.violations.map((v) => `${v.field}: ${v.message}`).join("; ")}`;
    case "release_not_found":
      return `release ${r.version} is not registered (agentctl release register)`;
    case "release_yanked":
      return `release ${r.version} was yanked (${r.reason}): it is never offered again; register and target a newer one`;
    case "too_few_canaries":
      return `min canaries asks for ${r.minCanaries} node(s) the first batch can upgrade, and the campaign has ${r.upgradable} (of ${r.totalNodes} selected; the others are already on the target, lack upgrade.v1, run a platform the release lacks or confirmed a higher sequence)`;
    case "release_too_new":
      return `release ${r.version} is newer than ${r.maxVersion}, the newest Agent this Control supports (agent.maxVersion)`;
    case "release_expired":
      return `release ${r.version} expired at ${new Date(r.expiresAt).toISOString()}; register a newer one`;
    case "too_many_steps":
      return `the ramp would need ${r.steps} steps for ${r.nodes} nodes, and a campaign has at most ${r.limit} batches (policy.maxBatches); raise its rate, factor or maximum, or lengthen its step`;
    case "busy": {
      const named = r.nodeIds.slice(0, NAMED_IN_MESSAGE).join(", ");
      const more =
        r.nodeIds.length > NAMED_IN_MESSAGE
          ? ` and ${r.nodeIds.length - NAMED_IN_MESSAGE} more`
          : "";
      return `${r.nodeIds.length} node(s) already in an active campaign (${r.campaignIds.join(", ")}): ${named}${more}`;
    }
    case "nothing_to_upgrade": {
      const why =
        r.totalNodes === 0
          ? "no enabled node that has connected matches the selector"
          : `all ${r.totalNodes} selected node(s) are already on ${r.version}, lack upgrade.v1, run a platform the release has no artifact for or confirmed a higher sequence`;
      return `no node can be upgraded: ${why}`;
    }
    default:
      return assertNever(r, "admission refusal");
  }
}
