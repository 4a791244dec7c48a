/**
 * Reference model of batch sizes from cumulative percentages, written apart from
 * `control/campaign/plan.ts`: node by node, a node joins the first batch whose cumulative
 * share, rounded up, still has room for it.
 */

/** How many nodes each batch holds for `total` nodes and cumulative `percents` (whole numbers). */
export function refBatchSizes(total: number, percents: readonly number[]): number[] {
  const sizes = percents.map(() => 0);
  // Room up to batch b: the smallest whole count c with c × 100 ≥ total × percent.
  const room = percents.map((p) => {
    let c = 0;
    while (c * 100 < total * p) c++;
    return c;
  });
  let batch = 0;
  for (let node = 1; node <= total; node++) {
    while (batch < percents.length && (room[batch] as number) < node) batch++;
    if (batch >= percents.length) break;
    sizes[batch] = (sizes[batch] as number) + 1;
  }
  return sizes;
}
