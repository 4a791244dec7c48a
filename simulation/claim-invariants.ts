/**
 * The claim invariants: what Control says about how a campaign ended, what it recorded as
 * desired, what it knows of an agent's confirmed sequence and how many batches it laid out,
 * judged against the simulated world's ground truth (`ground-truth.ts`), the simulated
 * operator's own log of the commands it issued, and the world's configuration (the release's
 * platforms, the policy, each gate's grace) — never against the engine's functions.
 *
 * - O6: a campaign the operator aborted with rollback while it was running or paused never
 *   ends `rolled_back` (that says a batch breached): it ends `aborted`, or `failed` when the
 *   rollback failed.
 * - O7: an agent whose platform the target release carries no artifact for is never sent that
 *   campaign's upgrade, and its campaign row never ends `failed` or `timed_out`.
 * - O8: a desired version recorded from a completed campaign has at least one agent of that
 *   campaign that ran the target when Control sent it the campaign's confirm.
 * - O9 (end): every agent that reported CONFIRMED on a campaign's confirm has Control's
 *   confirmed sequence for its node equal to its own where it verified the release it runs,
 *   and never below it (one that confirms the release it was installed with keeps its floor).
 * - O10: no campaign has more batches than the policy's `maxBatches`.
 * - O11: after an operator's resume, a campaign does not pause on an unreachable gate before
 *   the gate grace has passed.
 */
import type { MemoryCampaignStore, MemoryFleetStore } from "../control/campaign-store/index.js";
import type { SimFleet } from "./agents.js";
import { firstSent, versionAt } from "./ground-truth.js";
import type { IssuedCommand } from "./outcome-world.js";

/** What the claim checks read of the world. */
export interface ClaimWorld {
  readonly store: MemoryCampaignStore;
  readonly fleetStore: MemoryFleetStore;
  readonly fleet: SimFleet;
  /** Every command the simulated operator issued. */
  readonly commands: readonly IssuedCommand[];
  /** The policy's batch limit the simulated Control runs with. */
  readonly maxBatches: number;
  /** The fleet's platform when an agent's script names none. */
  readonly platform: string;
  readonly state: ClaimCheckState;
}

/** What the claim checks remember between steps. */
export interface ClaimCheckState {
  /** Campaigns and desired versions already judged. */
  readonly judged: Set<string>;
  /** Each campaign's phase at the last step. */
  readonly phase: Map<string, string>;
}

/** A fresh state. */
export function newClaimCheckState(): ClaimCheckState {
  return { judged: new Set(), phase: new Map() };
}

const opId = (campaignId: string, nodeId: string, kind: string) =>
  `${campaignId}/${nodeId}/${kind}`;

/** The platforms the release of `version` carries, as the world registered it. */
function platformsOf(w: ClaimWorld, version: string): readonly string[] | undefined {
  return w.store.tables.releases.get(version)?.artifacts.map((a) => a.platform);
}

/** O6, O7, O8, O10 and O11 after a step at `now`. */
export function claimViolations(w: ClaimWorld, now: number): string[] {
  const out: string[] = [];
  const t = w.store.tables;
  for (const [id, entry] of t.campaigns) {
    const c = entry.campaign;
    const before = w.state.phase.get(id);
    w.state.phase.set(id, c.phase);
    if (!w.state.judged.has(`batches:${id}`)) {
      w.state.judged.add(`batches:${id}`);
      if (c.batches.length > w.maxBatches)
        out.push(`O10: ${id} has ${c.batches.length} batches, the policy allows ${w.maxBatches}`);
    }
    if (c.phase === "rolled_back" && !w.state.judged.has(`end:${id}`)) {
      w.state.judged.add(`end:${id}`);
      const abort = w.commands.find(
        (x) =>
          x.campaignId === id &&
          x.kind === "abort" &&
          x.rollback === true &&
          (x.phase === "running" || x.phase === "paused"),
      );
      if (abort !== undefined)
        out.push(
          `O6: ${id} ended rolled_back, but the operator aborted it with rollback at ${abort.at} while it was ${abort.phase}: only a breach ends rolled_back`,
        );
    }
    if (c.phase === "paused" && before !== "paused" && (c.message ?? "").includes("unreachable")) {
      const grace = c.spec.gateGraceMs ?? 0;
      const resume = w.commands.findLast((x) => x.campaignId === id && x.kind === "resume");
      if (resume !== undefined && now - resume.at < grace)
        out.push(
          `O11: ${id} paused on an unreachable gate at ${now}, ${now - resume.at} ms after the operator's resume at ${resume.at} (grace ${grace} ms)`,
        );
    }
    const platforms = platformsOf(w, c.spec.targetVersion);
    if (platforms === undefined) continue;
    for (const row of t.nodes.get(id) ?? []) {
      const agent = w.fleet.agents.get(row.nodeId);
      const platform = agent?.script.platform ?? w.platform;
      if (agent === undefined || platforms.includes(platform)) continue;
      if (row.state === "failed" || row.state === "timed_out")
        out.push(
          `O7: ${row.nodeId} (${platform}, which ${c.spec.targetVersion} lacks) counts as ${row.state}${row.code ? `/${row.code}` : ""} in ${id}`,
        );
      if (firstSent(agent.record, opId(id, row.nodeId, "upgrade")) !== undefined)
        out.push(
          `O7: ${row.nodeId} (${platform}, which ${c.spec.targetVersion} lacks) was sent ${id}'s upgrade`,
        );
    }
  }
  for (const d of w.fleetStore.tables.desired.values()) {
    if (!d.setBy.startsWith("campaign:") || w.state.judged.has(`desired:${d.id}:${d.setAt}`))
      continue;
    w.state.judged.add(`desired:${d.id}:${d.setAt}`);
    const campaignId = d.setBy.slice("campaign:".length);
    const worked = (t.nodes.get(campaignId) ?? []).some((row) => {
      const r = w.fleet.agents.get(row.nodeId)?.record;
      const sent =
        r === undefined ? undefined : firstSent(r, opId(campaignId, row.nodeId, "confirm"));
      return r !== undefined && sent !== undefined && versionAt(r, sent) === d.target.version;
    });
    if (!worked)
      out.push(
        `O8: ${d.id} records ${d.target.version} as desired from ${campaignId}, on which no agent ran it when confirmed`,
      );
  }
  return out;
}

/** O9 at the end of a run whose campaigns all finished. */
export function claimEndViolations(w: ClaimWorld): string[] {
  const out: string[] = [];
  for (const [nodeId, agent] of w.fleet.agents) {
    const confirmed = agent.record.reports.some(
      (r) => r.phase === "CONFIRMED" && r.operationId.endsWith(`/${nodeId}/confirm`),
    );
    if (!confirmed) continue;
    const row = w.store.tables.registry.get(nodeId);
    const control = row?.confirmed_sequence ?? 0;
    // An agent confirming the release it was installed with (never verified by it) keeps its
    // floor, while Control records the confirm's sequence: Control may be above it then, never
    // below, and equal wherever the agent verified what it runs.
    const verifiedOwn = agent.sequences.has(agent.version);
    if (control < agent.confirmedSequence || (verifiedOwn && control !== agent.confirmedSequence))
      out.push(
        `O9: Control records confirmed sequence ${control} for ${nodeId}, whose agent confirmed ${agent.confirmedSequence}`,
      );
  }
  return out;
}
