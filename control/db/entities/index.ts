/** All MikroORM entity schemas of Control. */
import { AuditEventEntity } from "./audit-event.js";
import { CampaignEntity } from "./campaign.js";
import { CampaignCommandEntity } from "./campaign-command.js";
import { CampaignConfigFailureEntity } from "./campaign-config-failure.js";
import { CampaignNodeEntity } from "./campaign-node.js";
import { JoinTokenEntity } from "./join-token.js";
import { LeaseEntity } from "./lease.js";
import { NodeEntity } from "./node.js";
import { OperationEntity } from "./operation.js";
import { ReleaseEntity } from "./release.js";

export type { AuditEventRecord } from "./audit-event.js";
export type { CampaignRecord } from "./campaign.js";
export type { CampaignCommandRecord } from "./campaign-command.js";
export type { CampaignConfigFailureRecord } from "./campaign-config-failure.js";
export type { CampaignNodeRecord } from "./campaign-node.js";
export type { JoinTokenRecord } from "./join-token.js";
export type { LeaseRecord } from "./lease.js";
export type { NodeRecord } from "./node.js";
export type { OperationRecord } from "./operation.js";
export type { ReleaseRecord, StoredArtifact } from "./release.js";
export {
  AuditEventEntity,
  CampaignCommandEntity,
  CampaignConfigFailureEntity,
  CampaignEntity,
  CampaignNodeEntity,
  JoinTokenEntity,
  LeaseEntity,
  NodeEntity,
  OperationEntity,
  ReleaseEntity,
};

/** Every entity schema, for MikroORM's configuration. */
export const ENTITIES = [
  NodeEntity,
  JoinTokenEntity,
  AuditEventEntity,
  ReleaseEntity,
  CampaignEntity,
  CampaignNodeEntity,
  OperationEntity,
  CampaignCommandEntity,
  CampaignConfigFailureEntity,
  LeaseEntity,
];
