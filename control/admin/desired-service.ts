/**
 * `agentcontrol.admin.v1.DesiredVersionService`: list, set and clear the desired version of a
 * selector, a thin shell over `desired-commands.ts` (which the simulated operator runs too)
 * that presents each desired version with how many nodes it governs and how many converged.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type DesiredVersion as DesiredMessage,
  DesiredVersionSchema,
  type DesiredVersionService,
} from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import { type DesiredVersion, desiredGovernor, isAhead, type Policy } from "../campaign/index.js";
import { createSqlFleetStore, type FleetRow } from "../campaign-store/index.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { unlistedReason } from "../tuf/listed.js";
import { type Principal, principalKey } from "./auth.js";
import { clearDesired, type DesiredDeps, setDesired } from "./desired-commands.js";
import { verifyingNodeIds } from "./node-status-reads.js";
import { sqlReleaseLookup } from "./release-lookup.js";

/** What the service needs. */
export interface DesiredServiceDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly policy: Policy;
  /** The release channel's TUF repository (`tuf.dir`): the target must be listed there. */
  readonly tufDir?: string | undefined;
  /** Asks the leader's worker to run its fleet passes soon. */
  readonly wake: () => void;
}

const actorOf = (ctx: HandlerContext): Principal => ctx.values.get(principalKey) as Principal;

/** With a TUF repository, why its targets do not list a release (see `unlistedReason`). */
function tufUnlisted(tufDir: string | undefined): DesiredDeps["unusable"] {
  if (tufDir === undefined) return undefined;
  return (r) => unlistedReason(tufDir, r.version, r.sequence);
}

/**
 * The API message of desired version `d`, its node counts over `fleet` (the nodes `all`, the
 * desired versions there are, let it govern): a node on its target is converged, unless it is
 * among `verifying` (still in a campaign's config grace), counted apart.
 */
export function desiredMessageOf(
  d: DesiredVersion,
  fleet: readonly FleetRow[],
  all: readonly DesiredVersion[],
  verifying: ReadonlySet<string> = new Set(),
): DesiredMessage {
  let nodes = 0;
  let converged = 0;
  let onTargetVerifying = 0;
  let ahead = 0;
  const governing = desiredGovernor(all);
  for (const n of fleet) {
    const candidate = { ...n, agentVersion: n.agentVersion || undefined };
    if (governing(candidate)?.id !== d.id) continue;
    nodes++;
    if (n.agentVersion === d.target.version) {
      if (verifying.has(n.id)) onTargetVerifying++;
      else converged++;
    } else if (isAhead(candidate, d.target)) ahead++;
  }
  return create(DesiredVersionSchema, {
    id: d.id,
    selector: {
      labels: { ...d.selector.labels },
      pools: [...d.selector.pools],
      nodeIds: [...d.selector.nodeIds],
    },
    exclude: { nodeIds: [...d.exclude.nodeIds], tags: { ...d.exclude.tags } },
    targetVersion: d.target.version,
    targetSequence: BigInt(d.target.sequence),
    setAt: timestampFromDate(new Date(d.setAt)),
    setBy: d.setBy,
    maxFailures: d.settings.maxFailures,
    disruptionBudgetPercent: d.settings.disruptionBudgetPercent,
    haltedAt: d.haltedAt === undefined ? undefined : timestampFromDate(new Date(d.haltedAt)),
    haltedReason: d.haltedReason ?? "",
    nodes,
    converged,
    ahead,
    verifying: onTargetVerifying,
  });
}

/** Builds the DesiredVersionService implementation. */
export function createDesiredService(
  deps: DesiredServiceDeps,
): ServiceImpl<typeof DesiredVersionService> {
  const store = createSqlFleetStore(deps.db.pool);
  return {
    async listDesiredVersions() {
      return await store.transaction(async (tx) => {
        const all = await tx.readDesired();
        const fleet = await tx.readFleet();
        const newest = [...all].sort((a, b) => b.setAt - a.setAt || (a.id < b.id ? -1 : 1));
        const verifying = await verifyingNodeIds(deps.db);
        return {
          desiredVersions: newest.map((d) => desiredMessageOf(d, fleet, all, verifying)),
        };
      });
    },

    async setDesiredVersion(req, ctx) {
      const actor = actorOf(ctx);
      const set = await setDesired(
        {
          fleet: store,
          release: sqlReleaseLookup(deps.db),
          policy: deps.policy,
          unusable: tufUnlisted(deps.tufDir),
        },
        {
          targetVersion: req.targetVersion,
          selector: {
            labels: req.selector?.labels ?? {},
            pools: req.selector?.pools ?? [],
            nodeIds: req.selector?.nodeIds ?? [],
          },
          exclude: { nodeIds: req.exclude?.nodeIds ?? [], tags: req.exclude?.tags ?? {} },
          maxFailures: req.maxFailures,
          disruptionBudgetPercent: req.disruptionBudgetPercent,
          reason: req.reason,
          actor: { name: actor.name, ip: actor.ip },
          now: deps.clock.now(),
        },
      );
      deps.wake();
      return { desired: desiredMessageOf(set.desired, set.fleet, set.all) };
    },

    async clearDesiredVersion(req, ctx) {
      const actor = actorOf(ctx);
      await clearDesired(store, req.id, { name: actor.name, ip: actor.ip }, deps.clock.now());
      return {};
    },
  };
}
