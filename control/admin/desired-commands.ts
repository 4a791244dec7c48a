/**
 * An administrator's desired-version commands (set, clear) over the fleet store port (SQL in
 * Control, memory in the simulation), each with its audit row in the same transaction. Setting
 * one replaces the selector's desired version (whatever set it) and clears a halt; the leader's
 * worker converges the nodes it governs at its next fleet pass, which the caller asks for.
 */
import {
  type AdmissionRelease,
  DEFAULT_CONVERGENCE_MAX_FAILURES,
  DEFAULT_DISRUPTION_BUDGET_PERCENT,
  type DesiredVersion,
  desiredIdOf,
  type Policy,
} from "../campaign/index.js";
import type { FleetRow, FleetStore } from "../campaign-store/index.js";
import type { Actor } from "../db/audit-log.js";
import { ControlError } from "../errors.js";
import type { ReleaseLookup } from "./release-lookup.js";

/** What setting a desired version needs. */
export interface DesiredDeps {
  readonly fleet: FleetStore;
  readonly release: ReleaseLookup;
  /** Its reconnect timeout and config grace become the desired version's. */
  readonly policy: Pick<Policy, "reconnectTimeoutMs" | "configGraceMs">;
  /**
   * Why a registered release may not become a desired version (e.g. the release channel's TUF
   * targets do not list it), or undefined when it may; absent: every registered release may.
   */
  readonly unusable?: ((release: AdmissionRelease) => Promise<string | undefined>) | undefined;
}

/** A desired version to set, as an administrator asks for it. */
export interface SetDesiredRequest {
  readonly targetVersion: string;
  readonly selector: DesiredVersion["selector"];
  readonly exclude: DesiredVersion["exclude"];
  /** 1-100; undefined: the default. */
  readonly maxFailures: number | undefined;
  /** 0-100; undefined: the default. */
  readonly disruptionBudgetPercent: number | undefined;
  readonly reason: string;
  readonly actor: Actor;
  readonly now: Date;
}

/** A desired version as set, with what the caller needs to present it. */
export interface SetDesiredResult {
  readonly desired: DesiredVersion;
  /** Every desired version after the set. */
  readonly all: readonly DesiredVersion[];
  /** The fleet as read in the set's transaction. */
  readonly fleet: readonly FleetRow[];
}

function percent(field: string, value: number | undefined, fallback: number, min: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min || v > 100) {
    throw new ControlError(
      "invalid_argument",
      `${field} must be an integer from ${min} to 100, not ${v}`,
      { field },
    );
  }
  return v;
}

/**
 * Sets the desired version of `req.selector` (minus `req.exclude`), with its `desired.set` audit
 * row. It keeps the guard rails (`settings.guardRails`: windows, download budget, threshold,
 * failure budget, gates) of the desired version it replaces, if any: setting it again (as an
 * operator resumes a halted convergence) does not free convergence from the policy of the
 * campaign that set it.
 * @throws ControlError `invalid_argument` (no target version, a percentage out of range) or
 *   `release_not_found` (the target is not registered), `release_yanked`, or `release_unusable` ({@link
 *   DesiredDeps.unusable}); nothing is written then.
 */
export async function setDesired(
  deps: DesiredDeps,
  req: SetDesiredRequest,
): Promise<SetDesiredResult> {
  const version = req.targetVersion.trim();
  if (version === "") {
    throw new ControlError("invalid_argument", "target_version is required", {
      field: "target_version",
    });
  }
  const maxFailures = percent("max_failures", req.maxFailures, DEFAULT_CONVERGENCE_MAX_FAILURES, 1);
  const budget = percent(
    "disruption_budget_percent",
    req.disruptionBudgetPercent,
    DEFAULT_DISRUPTION_BUDGET_PERCENT,
    0,
  );
  const release = await deps.release(version);
  if (!release) {
    throw new ControlError(
      "release_not_found",
      `release ${version} is not registered (agentctl release register)`,
    );
  }
  if (release.yanked !== undefined) {
    throw new ControlError(
      "release_yanked",
      `release ${version} was yanked (${release.yanked.reason}): it is never offered again; set a newer release as the desired version`,
      { version },
    );
  }
  const unusable = await deps.unusable?.(release);
  if (unusable !== undefined) throw new ControlError("release_unusable", unusable, { version });
  const selector = {
    labels: { ...req.selector.labels },
    pools: [...req.selector.pools],
    nodeIds: [...req.selector.nodeIds],
  };
  const exclude = { nodeIds: [...req.exclude.nodeIds], tags: { ...req.exclude.tags } };
  let d: DesiredVersion = {
    id: desiredIdOf(selector, exclude),
    selector,
    exclude,
    target: { version: release.version, sequence: release.sequence },
    setAt: req.now.getTime(),
    setBy: req.actor.name,
    settings: {
      reconnectTimeoutMs: deps.policy.reconnectTimeoutMs,
      configGraceMs: deps.policy.configGraceMs,
      disruptionBudgetPercent: budget,
      maxFailures,
    },
    haltedAt: undefined,
    haltedReason: undefined,
  };
  return await deps.fleet.transaction(async (tx) => {
    const replaced = (await tx.readDesired()).find((x) => x.id === d.id);
    const guardRails = replaced?.settings.guardRails;
    if (guardRails !== undefined) d = { ...d, settings: { ...d.settings, guardRails } };
    await tx.writeDesired(d);
    await tx.insertAudits(
      [
        {
          actor: req.actor.name,
          actorIp: req.actor.ip,
          action: "desired.set",
          campaignId: d.id,
          message: `desired version ${d.id} set to ${d.target.version}${req.reason ? `: ${req.reason}` : ""}`,
          detail: {
            desiredId: d.id,
            version: d.target.version,
            selector,
            exclude,
            reason: req.reason,
          },
        },
      ],
      req.now,
    );
    const all = [...(await tx.readDesired()).filter((x) => x.id !== d.id), d];
    return { desired: d, all, fleet: await tx.readFleet() };
  });
}

/**
 * Clears desired version `id` (its nodes no longer converge), with its `desired.clear` audit
 * row.
 * @throws ControlError `desired_not_found` (nothing written).
 */
export async function clearDesired(
  fleet: FleetStore,
  id: string,
  actor: Actor,
  now: Date,
): Promise<void> {
  await fleet.transaction(async (tx) => {
    if (!(await tx.deleteDesired(id))) {
      throw new ControlError("desired_not_found", `no desired version with id "${id}"`);
    }
    await tx.insertAudits(
      [
        {
          actor: actor.name,
          actorIp: actor.ip,
          action: "desired.clear",
          campaignId: id,
          message: `desired version ${id} cleared: its nodes no longer converge`,
        },
      ],
      now,
    );
  });
}
