/**
 * How the dashboard words a selector and its exclusions (`pool=db env=prod, not node-7`), the
 * same way on the fleet page, the campaign page and the start form's plan.
 */
import type { Exclude, Selector } from "../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

/** `labels k=v, pools a|b, nodes x y, not …`; `every node` when it selects everything. */
export function formatSelector(selector: Selector | undefined, exclude?: Exclude): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(selector?.labels ?? {})) parts.push(`${k}=${v}`);
  if (selector?.pools.length) parts.push(`pool ${selector.pools.join("|")}`);
  if (selector?.nodeIds.length) parts.push(`nodes ${selector.nodeIds.join(" ")}`);
  const not: string[] = [...(exclude?.nodeIds ?? [])];
  for (const [k, v] of Object.entries(exclude?.tags ?? {})) not.push(`${k}=${v}`);
  const chosen = parts.length === 0 ? "every node" : parts.join(", ");
  return not.length === 0 ? chosen : `${chosen}, not ${not.join(" ")}`;
}
