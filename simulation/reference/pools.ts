/**
 * Reference model of pool disruption budgets, written apart from `control/campaign/batch-rules.ts`:
 * the budget found by counting up, and the nodes in flight recounted from their states.
 */

/** How many nodes of a pool of `size` may be in flight at `budgetPercent`: at least one. */
export function refPoolLimit(size: number, budgetPercent: number): number {
  let k = 0;
  while ((k + 1) * 100 <= size * budgetPercent) k++;
  return Math.max(k, 1);
}

/**
 * Whether a node record holds a slot at `now`: offered, applying or restarting, rolling back
 * (it restarts onto its previous release), or verifying before the end of its config grace (or
 * with no grace end set).
 */
export function refInFlight(
  n: { readonly state: string; readonly graceEndsAt: number | undefined },
  now: number,
): boolean {
  if (n.state === "offered" || n.state === "applying" || n.state === "restarting") return true;
  if (n.state === "rolling_back") return true;
  if (n.state !== "verifying") return false;
  return n.graceEndsAt === undefined || now < n.graceEndsAt;
}
