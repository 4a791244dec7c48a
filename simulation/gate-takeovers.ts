/**
 * Control's takeovers across a gate's answers, and the invariants G3 and G4 that judge them
 * from the gate scripts' ground truth. In a share of the seeds with faults that are not calm,
 * one campaign with gates gets one of:
 *
 * - Control down between two short unreachable spells: its first gate is unreachable for a
 *   quarter of the gate grace from its first evaluation in batch 0, and again from 5 s before
 *   Control is back; every Control process crashes shortly after that first evaluation, Control
 *   staying down for longer than the grace. The gate was never unreachable for its grace at
 *   once; a new leader that counted Control's downtime as the gate's unreachability (the new
 *   spell joined to the old one) would breach the batch (G3).
 * - A lease lost after the gate turned failing: batch 0 soaks for {@link SOAK_MS}; its first gate
 *   holds until 10 s before the soak ends, then fails, slowly (each failing answer takes 8 s);
 *   the lease is lost 5 s before the soak ends, while the old leader's last answer was a pass. A
 *   new leader that passed the batch on the old leader's pass would pass it over a failing
 *   gate it never saw hold (G4).
 *
 * - G3: a batch breached on an unreachable gate only where one of the campaign's gate scripts is
 *   unreachable in that batch for at least the gate grace.
 * - G4: a batch with gates and nodes passed only if each gate answered "holds" for that batch
 *   after the lease epoch that passed it began (and after the batch settled).
 */
import { createPrng, deriveSeed } from "../agent-sim/prng.js";
import type { FleetScenario } from "./rollout-scenario.js";
import type { CampaignPlan, GateFault } from "./scenario.js";
import { type GateScript, SIM_GATE_GRACE_MS } from "./schedules.js";
import type { SimGates } from "./sim-gates.js";

/** The share of eligible seeds that get one of the takeovers. */
const SHARE = 0.5;
/** The soak of batch 0 in the lease-loss takeover. */
const SOAK_MS = 60_000;

/** Control down between two short unreachable spells of `c`'s first gate (see the file's TSDoc). */
function downAcrossSpell(
  s: FleetScenario,
  c: CampaignPlan,
  r: () => number,
): Pick<FleetScenario, "campaigns" | "gateScripts" | "gateFaults"> {
  const scripts = s.gateScripts.get(c.id) ?? [];
  const afterMs = 1000 + Math.floor(r() * 4000);
  const downMs = Math.round(SIM_GATE_GRACE_MS * (1.5 + r()));
  // Unreachable again from 5 s before Control is back: the new leader's first answers fail.
  const spells: GateScript = {
    kind: "unreachable_twice",
    batch: 0,
    forMs: SIM_GATE_GRACE_MS / 4,
    againAtMs: afterMs + downMs - 5000,
  };
  const fault: GateFault = { kind: "down", campaignId: c.id, batch: 0, gate: 0, afterMs, downMs };
  return {
    campaigns: s.campaigns,
    gateScripts: new Map(s.gateScripts).set(c.id, [spells, ...scripts.slice(1)]),
    gateFaults: [...(s.gateFaults ?? []), fault],
  };
}

/** A lease lost after `c`'s first gate turned failing (see the file's TSDoc). */
function leaseLossAfterFail(
  s: FleetScenario,
  c: CampaignPlan,
): Pick<FleetScenario, "campaigns" | "gateScripts" | "gateFaults"> {
  const scripts = s.gateScripts.get(c.id) ?? [];
  const late: GateScript = { kind: "fail_from", batch: 0, passMs: SOAK_MS - 10_000, slowMs: 8000 };
  const fault: GateFault = {
    kind: "lease_loss",
    campaignId: c.id,
    batch: 0,
    gate: 0,
    afterMs: SOAK_MS - 5000,
  };
  const batches = (c.spec.batches ?? []).map((b, i) => (i === 0 ? { ...b, minDurationMs: 0 } : b));
  const spec = { ...c.spec, batches, soakMs: SOAK_MS, windows: undefined };
  return {
    campaigns: s.campaigns.map((x) => (x === c ? { ...x, spec } : x)),
    gateScripts: new Map(s.gateScripts).set(c.id, [late, ...scripts.slice(1)]),
    gateFaults: [...(s.gateFaults ?? []), fault],
  };
}

/** `s` with, for a share of its seeds with faults, one of the takeovers (the file's TSDoc). */
export function withGateTakeovers(s: FleetScenario): FleetScenario {
  if (s.calm || s.faults.length === 0) return s;
  const prng = createPrng(deriveSeed(s.seed, 12));
  const r = () => prng.next();
  const gated = s.campaigns.filter((c) => (s.gateScripts.get(c.id)?.length ?? 0) > 0);
  if (gated.length === 0 || r() >= SHARE) return s;
  const c = gated[Math.floor(r() * gated.length)] as CampaignPlan;
  const takeover =
    r() < 0.5 || c.spec.batches === undefined ? downAcrossSpell(s, c, r) : leaseLossAfterFail(s, c);
  return { ...s, ...takeover };
}

/** True when the script keeps its gate unreachable in `batch` for at least `graceMs` at once. */
function unreachableForGrace(script: GateScript, batch: number, graceMs: number): boolean {
  if (script.kind === "unreachable_in") return script.batch === batch && script.forMs >= graceMs;
  if (script.kind !== "unreachable_twice" || script.batch !== batch) return false;
  const longest = script.againAtMs <= script.forMs ? script.againAtMs + script.forMs : script.forMs;
  return longest >= graceMs;
}

/**
 * G3 over the batches that breached since the last call (`seen` remembers them): a breach on an
 * unreachable gate (the campaign's message says so) needs a gate script unreachable in that
 * batch for at least the campaign's gate grace.
 */
export function unreachableBreachViolations(
  gates: SimGates,
  campaigns: Iterable<{
    readonly id: string;
    readonly message?: string | undefined;
    readonly spec: {
      readonly gates?: readonly unknown[] | undefined;
      readonly gateGraceMs?: number | undefined;
    };
    readonly batches: readonly { readonly index: number; readonly state: string }[];
  }>,
  seen: Set<string>,
): string[] {
  const out: string[] = [];
  for (const c of campaigns) {
    for (const b of c.batches) {
      const key = `${c.id}/${b.index}`;
      if (b.state !== "breached" || seen.has(key)) continue;
      seen.add(key);
      if (!(c.message ?? "").includes(`of batch ${b.index + 1} failed: unreachable for`)) continue;
      const grace = c.spec.gateGraceMs ?? 0;
      const count = c.spec.gates?.length ?? 0;
      const real = Array.from({ length: count }, (_, g) => gates.script(c.id, g)).some((s) =>
        unreachableForGrace(s, b.index, grace),
      );
      if (!real)
        out.push(
          `G3: ${c.id} batch ${b.index + 1} breached on an unreachable gate, but no gate of it was unreachable for its grace (${grace} ms): ${c.message}`,
        );
    }
  }
  return out;
}

/**
 * G4 over the batches that passed since the last call (`seen` remembers them): a batch with
 * nodes passed at its `endedAt` by the lease epoch that began at `leadSince` needs, for each of
 * its campaign's gates, a holding answer for that batch at or after `leadSince` and its settle
 * (`toleranceMs` either way: the batch's stamps are on its Control's clock, `clock-faults.ts`).
 */
export function stalePassViolations(
  gates: SimGates,
  campaigns: Iterable<{
    readonly id: string;
    readonly spec: { readonly gates?: readonly unknown[] | undefined };
    readonly batches: readonly {
      readonly index: number;
      readonly state: string;
      readonly nodeCount: number;
      readonly settledAt: number | undefined;
      readonly endedAt: number | undefined;
    }[];
  }>,
  leadSince: number,
  seen: Set<string>,
  toleranceMs = 0,
): string[] {
  const out: string[] = [];
  for (const c of campaigns) {
    const count = c.spec.gates?.length ?? 0;
    for (const b of c.batches) {
      const key = `${c.id}/${b.index}`;
      if (b.state !== "passed" || seen.has(key)) continue;
      seen.add(key);
      if (count === 0 || b.nodeCount === 0 || b.endedAt === undefined) continue;
      const from = Math.max(leadSince, b.settledAt ?? leadSince);
      for (let g = 0; g < count; g++) {
        const held = gates.passes.some(
          (p) =>
            p.campaignId === c.id &&
            p.batch === b.index &&
            p.gate === g &&
            p.at >= from - toleranceMs &&
            p.at <= (b.endedAt as number) + toleranceMs,
        );
        if (!held)
          out.push(
            `G4: ${c.id} batch ${b.index + 1} passed at ${b.endedAt}, but gate ${g + 1} gave it no holding answer since ${from} (this leader's lease and the batch's settle)`,
          );
      }
    }
  }
  return out;
}
