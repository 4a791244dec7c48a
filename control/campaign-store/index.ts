/**
 * The campaign store: the {@link CampaignStore} port, its PostgreSQL adapter (the product's)
 * and its memory adapter (unit tests and the deterministic simulation), the row conversions
 * both share, and the admin API's SQL reads of campaigns.
 */
export type * from "./admin-port.js";
export * from "./fleet-port.js";
export * from "./memory/memory-fleet.js";
export * from "./memory/memory-store.js";
export * from "./memory/store-faults.js";
export type { OfferRelease, ReleaseYank } from "./offer-release.js";
export * from "./port.js";
export * from "./rows.js";
export { createSqlFleetStore, START_LOCK_KEY, sqlFleetTransaction } from "./sql/fleet.js";
export { WORKER_LEASE } from "./sql/lease.js";
export * from "./sql/queries.js";
export {
  busyNodes,
  inTransaction,
  type Queryable,
  readCampaign,
  readCampaigns,
  readNodes,
} from "./sql/reads.js";
export { createSqlCampaignStore, sqlTransaction } from "./sql/sql-store.js";
export { readWaitFacts, type WaitFacts } from "./sql/waits-reads.js";
export { insertAudits, insertCampaign } from "./sql/writes.js";
