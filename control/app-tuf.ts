/**
 * Control's release channel (`tuf.*`) as wired at start: the timestamp window pinned in the
 * database (refusing a start whose window differs from the one the fleet trusts), the route
 * that serves the TUF metadata, and the gauge of the offline metadata's expiry.
 */
import type { Clock } from "./clock.js";
import { ConfigError, type ControlConfig } from "./config.js";
import type { Database } from "./db/database.js";
import { recordFleetSetting } from "./db/fleet-settings.js";
import type { ControlMetrics } from "./metrics/index.js";
import type { HttpRoute } from "./shared/http-route.js";
import { tufRoute } from "./tuf/tuf-route.js";
import { pinTimestampWindow } from "./tuf/window-pin.js";

/** What {@link startTufChannel} needs. */
export interface TufChannelOptions {
  readonly config: ControlConfig;
  readonly db: Database;
  readonly clock: Clock;
  readonly metrics: ControlMetrics;
}

/**
 * Pins the timestamp window and returns the route serving the release channel's TUF metadata,
 * with `agent_control_tuf_offline_expiry_seconds` registered; undefined (nothing done) when
 * `tuf` is not configured. Throws {@link ConfigError} when the window differs from the pinned one.
 */
export async function startTufChannel(o: TufChannelOptions): Promise<HttpRoute | undefined> {
  const tuf = o.config.tuf;
  if (tuf === undefined) return undefined;
  const problem = await pinTimestampWindow(
    (name, value) => recordFleetSetting(o.db.pool, name, value),
    tuf.timestampKey,
    tuf.timestampWindowSeconds,
  );
  if (problem !== undefined) throw new ConfigError([problem]);
  const repository = tufRoute({
    dir: tuf.dir,
    snapshotKey: tuf.snapshotKey,
    timestampKey: tuf.timestampKey,
    ttlMs: tuf.timestampExpirySeconds * 1000,
    windowMs: tuf.timestampWindowSeconds * 1000,
    clock: o.clock,
  });
  o.metrics.gauge(
    "agent_control_tuf_offline_expiry_seconds",
    "Seconds until the release channel's root or targets metadata expires (negative: Agents refuse new releases).",
    () => repository.offlineExpirySeconds(),
    // Every worker reads the same metadata: the group says the soonest.
    "min",
  );
  return repository.route;
}
