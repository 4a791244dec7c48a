/**
 * Reference model of who a selector takes and which desired version governs a node, written
 * apart from `control/campaign/plan.ts` and `desired.ts`, over the simulated agents' own labels
 * and pools.
 */

/** A selector and its exclusions, as stored. */
export interface RefSelection {
  readonly selector: {
    readonly labels: Readonly<Record<string, string>>;
    readonly pools: readonly string[];
    readonly nodeIds: readonly string[];
  };
  readonly exclude: {
    readonly nodeIds: readonly string[];
    readonly tags: Readonly<Record<string, string>>;
  };
}

/** A node as the world knows it. */
export interface RefNode {
  readonly id: string;
  readonly pool: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Whether the node carries one of the excluded ids or label pairs. */
export function refExcluded(s: RefSelection, n: RefNode): boolean {
  if (s.exclude.nodeIds.some((id) => id === n.id)) return true;
  return Object.keys(s.exclude.tags).some((k) => n.labels[k] === s.exclude.tags[k]);
}

/** Whether the selector takes the node and its exclusions do not remove it. */
export function refSelects(s: RefSelection, n: RefNode): boolean {
  for (const k of Object.keys(s.selector.labels))
    if (n.labels[k] !== s.selector.labels[k]) return false;
  if (s.selector.pools.length > 0 && !s.selector.pools.some((p) => p === n.pool)) return false;
  if (s.selector.nodeIds.length > 0 && !s.selector.nodeIds.some((id) => id === n.id)) return false;
  return !refExcluded(s, n);
}

/**
 * The desired version that governs the node: of those whose selection takes it, the one set
 * last (ties: the greater id).
 */
export function refGoverning<
  T extends RefSelection & { readonly id: string; readonly setAt: number },
>(n: RefNode, desired: readonly T[]): T | undefined {
  const taking = desired.filter((d) => refSelects(d, n));
  taking.sort((a, b) => b.setAt - a.setAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return taking[0];
}

/**
 * Compares two dotted versions numerically, part by part (`9.0.0` > `2.0.0`, `1.10` > `1.9`);
 * a pre-release or build suffix is ignored.
 */
export function refCompareVersions(a: string, b: string): number {
  const parts = (v: string) => (v.split(/[-+]/)[0] ?? "").split(".").map((x) => Number(x) || 0);
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
