/** All MikroORM entity schemas of Control. */
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
