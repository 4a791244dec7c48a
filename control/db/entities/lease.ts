/**
 * Leader leases: who may write campaign decisions. `epoch` grows on every takeover, and
 * every decision transaction checks `holder` and `epoch` first, so a stale leader's writes
 * are refused.
 */
import { BigIntType, EntitySchema } from "@mikro-orm/core";

/** A lease row. */
export interface LeaseRecord {
  name: string;
  holder: string;
  /** The PostgreSQL backend pid of the holder's lease connection: its liveness proof. */
  holderPid: number;
  epoch: number;
  expiresAt: Date;
}

/** MikroORM schema of {@link LeaseRecord} (table `control_leases`). */
export const LeaseEntity = new EntitySchema<LeaseRecord>({
  name: "LeaseRecord",
  tableName: "control_leases",
  properties: {
    name: { type: "string", primary: true, columnType: "text" },
    holder: { type: "string", columnType: "text" },
    holderPid: { type: "integer" },
    epoch: { type: new BigIntType("number") },
    expiresAt: { type: "Date", columnType: "timestamptz" },
  },
});
