/**
 * Admission refusals (`control/campaign/admit.ts`) as the errors of the admin API: one code and
 * the details a client acts on per refusal, the sentence from `refusalMessage`.
 */
import {
  type AdmissionRefusal,
  assertNever,
  NAMED_IN_MESSAGE,
  refusalMessage,
} from "../campaign/index.js";
import { ControlError } from "../errors.js";

/**
 * The error an administrator gets for an admission refusal: invalid_plan (spec or ramp),
 * release_not_found, release_yanked, invalid_argument (above agent.maxVersion), release_unusable (expired, or
 * below a sequence a node confirmed, naming the nodes), node_busy (naming the nodes and their
 * campaigns) or no_eligible_nodes (none, or fewer than min canaries); the message is {@link refusalMessage}'s.
 */
export function refusalError(r: AdmissionRefusal): ControlError {
  const message = refusalMessage(r);
  switch (r.kind) {
    case "invalid_spec":
      return new ControlError("invalid_plan", message, {
        field: r.violations.map((v) => `spec.${v.field}`).join(","),
      });
    case "release_not_found":
      return new ControlError("release_not_found", message);
    case "release_yanked":
      return new ControlError("release_yanked", message, { version: r.version, reason: r.reason });
    case "too_few_canaries":
      return new ControlError("no_eligible_nodes", message, {
        field: "spec.min_canaries",
        minCanaries: String(r.minCanaries),
        upgradable: String(r.upgradable),
      });
    case "release_too_new":
      return new ControlError("invalid_argument", message, { field: "spec.target_version" });
    case "release_expired":
      return new ControlError("release_unusable", message, {
        version: r.version,
        expiresAt: new Date(r.expiresAt).toISOString(),
      });
    case "too_many_steps":
      return new ControlError("invalid_plan", message, { field: "spec.ramp" });
    case "busy":
      return new ControlError("node_busy", message, {
        nodeIds: r.nodeIds.slice(0, NAMED_IN_MESSAGE).join(","),
        nodeCount: String(r.nodeIds.length),
        campaignIds: r.campaignIds.slice(0, NAMED_IN_MESSAGE).join(","),
      });
    case "nothing_to_upgrade":
      return new ControlError("no_eligible_nodes", message);
    default:
      return assertNever(r, "admission refusal");
  }
}
