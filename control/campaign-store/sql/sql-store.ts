/**
 * The PostgreSQL adapter of the {@link CampaignStore} port: plain `pg` statements on pooled
 * clients (a transaction holds one client from `begin` to `commit`), MikroORM only to load a
 * release's envelope. Notifications use LISTEN/NOTIFY (`notifications.ts`).
 */
import type pg from "pg";
import type { Clock } from "../../clock.js";
import type { Database } from "../../db/database.js";
import { ReleaseEntity } from "../../db/entities/index.js";
import type { Logger } from "../../log.js";
import { parseEnvelope } from "../../shared/release/index.js";
import type { CampaignStore, CampaignTransaction } from "../port.js";
import { recordFacts } from "./facts-writes.js";
import { readGateResults, recordGateResult } from "./gates.js";
import { lockPoolBudget } from "./late-rollbacks.js";
import { createLeaderLease, holdsLease } from "./lease.js";
import { listen, notify } from "./notifications.js";
import { markSent, unackedOperations } from "./outbox.js";
import {
  inTransaction,
  liveCampaignIds,
  liveCampaignOfNodes,
  openNodeIds,
  pendingCommands,
  poolLoads,
  type Queryable,
  readCampaign,
  readConfigFailures,
  readNodes,
  readOperationFacts,
  readRegistry,
} from "./reads.js";
import { insertCampaign, writeDecision } from "./writes.js";
import { readYanks } from "./yanks.js";

/** The port's transaction over one client inside `begin … commit`. */
export function sqlTransaction(client: pg.ClientBase | Queryable): CampaignTransaction {
  const q = client as Queryable;
  return {
    holdsLease: (name, holder, epoch) => holdsLease(q, name, holder, epoch),
    readCampaign: (id, lock) => readCampaign(q, id, lock),
    readNodes: (id) => readNodes(q, id),
    readRegistry: (ids) => readRegistry(q, ids),
    readOperationFacts: (id, ids) => readOperationFacts(q, id, ids),
    readConfigFailures: (id, ids) => readConfigFailures(q, id, ids),
    pendingCommands: (id) => pendingCommands(q, id),
    // Serialized with late rollbacks' admissions (late-rollbacks.ts) until the decision commits.
    poolLoads: async (pools, excluding, now) => {
      if (pools.length > 0) await lockPoolBudget(q);
      return poolLoads(q, pools, excluding, now);
    },
    writeDecision: (w) => writeDecision(q, w),
    insertCampaign: (input) => insertCampaign(q, input),
    readGateResults: (id, batch) => readGateResults(q, id, batch),
    readYanks: (versions) => readYanks(q, versions),
  };
}

/** The campaign store on Control's database. */
export function createSqlCampaignStore(db: Database, log: Logger, clock: Clock): CampaignStore {
  const pool = db.pool;
  return {
    transaction: (work) => inTransaction(pool, (client) => work(sqlTransaction(client))),
    liveCampaignIds: () => liveCampaignIds(pool),
    openNodeIds: (id) => openNodeIds(pool, id),
    recordFacts: (reports, failures) => recordFacts(pool, reports, failures),
    unackedOperations: (filter) => unackedOperations(pool, filter),
    markSent: (ids, at) => markSent(pool, ids, at),
    async offerRelease(version) {
      const record = await db.em().findOne(ReleaseEntity, { version }, { populate: ["envelope"] });
      if (!record) return undefined;
      return {
        version: record.version,
        sequence: record.sequence,
        envelope: parseEnvelope(new Uint8Array(record.envelope)),
        artifacts: record.artifacts,
        expiresAt: record.expiresAt.getTime(),
      };
    },
    lease: (options) => createLeaderLease({ ...options, pool, log }),
    liveCampaignOfNodes: (ids) => liveCampaignOfNodes(pool, ids),
    notify: (channel, lines) => notify(pool, channel, lines),
    listen: (channels, listener) => listen(pool, log, clock, channels, listener),
    recordGateResult: (w) => recordGateResult(pool, w),
  };
}
