/** All MikroORM entity schemas of Control. */
import { AuditEventEntity } from "./audit-event.js";
import { JoinTokenEntity } from "./join-token.js";
import { NodeEntity } from "./node.js";

export type { AuditEventRecord } from "./audit-event.js";
export type { JoinTokenRecord } from "./join-token.js";
export type { NodeRecord } from "./node.js";
export { AuditEventEntity, JoinTokenEntity, NodeEntity };

/** Every entity schema, for MikroORM's configuration. */
export const ENTITIES = [NodeEntity, JoinTokenEntity, AuditEventEntity];
