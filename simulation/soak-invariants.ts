/**
 * S1, the soak: no batch of a campaign with a soak passes before `soakMs` of wall time after
 * the last of its agents that took the upgrade first came back on the target. Judged from the
 * agents' own record (`ground-truth.ts`): the first stream each opened on the target with a new
 * boot after the upgrade reached it, or — for a node Control had judged final short of success
 * before it came back (a late return) — the time Control says it finished. A node settles no
 * sooner than that (later still by its configuration grace), and the soak counts only time inside
 * the maintenance windows, never more than the wall time, so the bound holds under every rule;
 * it is checked once, when the batch is first seen passed.
 */
import type { MemoryCampaignStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import type { AgentRecord } from "./ground-truth.js";

/** The boot the agent ran when `t` came. */
function bootAt(r: AgentRecord, t: number): number | undefined {
  let boot: number | undefined;
  for (const c of r.connects) {
    if (c.at > t) break;
    boot = c.boot;
  }
  return boot;
}

/** When the agent, reached by the upgrade at `received`, first came back on `target` by `by`. */
function firstBack(r: AgentRecord, received: number, target: string, by: number) {
  const before = bootAt(r, received);
  return r.connects.find(
    (c) => c.at > received && c.at <= by && c.version === target && c.boot !== before,
  )?.at;
}

/**
 * S1 for the batches first seen passed since the last call (`judged` holds those seen).
 * `toleranceMs`: how much shorter the soak may look on the reference clock when Controls'
 * clocks disagree (`clock-faults.ts`; the pass is stamped on its Control's clock).
 */
export function soakViolations(
  store: MemoryCampaignStore,
  fleet: SimFleet,
  judged: Set<string>,
  toleranceMs = 0,
): string[] {
  const out: string[] = [];
  for (const [campaignId, entry] of store.tables.campaigns) {
    const c = entry.campaign;
    const soakMs = c.spec.soakMs;
    for (const b of c.batches) {
      if (b.state !== "passed" || b.endedAt === undefined) continue;
      const key = `${campaignId}#${b.index}`;
      if (judged.has(key)) continue;
      judged.add(key);
      if (soakMs <= 0) continue;
      let last: { nodeId: string; at: number } | undefined;
      for (const n of store.tables.nodes.get(campaignId) ?? []) {
        if (n.batch !== b.index) continue;
        const r = fleet.agents.get(n.nodeId)?.record;
        const received = r?.received.find((o) => o.id === `${campaignId}/${n.nodeId}/upgrade`)?.at;
        if (r === undefined || received === undefined) continue;
        let back = firstBack(r, received, c.spec.targetVersion, b.endedAt);
        // Judged failed before it came back (a late return): it settled when so judged.
        const judged = n.state !== "succeeded" && n.finishedAt !== undefined;
        if (back !== undefined && judged && (n.finishedAt as number) < back)
          back = n.finishedAt as number;
        if (back !== undefined && (last === undefined || back > last.at))
          last = { nodeId: n.nodeId, at: back };
      }
      if (last !== undefined && b.endedAt - last.at < soakMs - toleranceMs)
        out.push(
          `S1: ${campaignId} batch ${b.index + 1} passed at ${b.endedAt}, ${b.endedAt - last.at} ms after ${last.nodeId} came back on ${c.spec.targetVersion}, within its soak of ${soakMs} ms`,
        );
    }
  }
  return out;
}
