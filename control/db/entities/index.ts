/**
 * All MikroORM entity schemas of Control. The campaign tables (`campaigns`, `campaign_nodes`,
 * `campaign_operations`, `campaign_commands`, `campaign_config_failures`, `control_leases`)
 * have none: migration 0003 and the SQL store (control/campaign-store/sql/) describe them
 * (docs/decisions.md, "Storage").
 */
import { AuditEventEntity } from "./audit-event.js";
import { JoinTokenEntity } from "./join-token.js";
import { NodeEntity } from "./node.js";
import { ReleaseEntity } from "./release.js";

export type { AuditEventRecord } from "./audit-event.js";
export type { JoinTokenRecord } from "./join-token.js";
export type { NodeRecord } from "./node.js";
export type { ReleaseRecord, StoredArtifact } from "./release.js";
export { AuditEventEntity, JoinTokenEntity, NodeEntity, ReleaseEntity };

/** Every entity schema, for MikroORM's configuration. */
export const ENTITIES = [NodeEntity, JoinTokenEntity, AuditEventEntity, ReleaseEntity];
