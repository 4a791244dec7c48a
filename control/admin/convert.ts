/** Conversions from stored records to admin API messages. */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type JoinToken,
  JoinTokenSchema,
  type Node,
  NodeSchema,
} from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { type Release, ReleaseSchema } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import type { JoinTokenRecord, NodeRecord, ReleaseRecord } from "../db/entities/index.js";
import { downloadPath } from "../releases/downloads.js";

/** Live facts the hub knows better than the row (which lags by up to one flush). */
export interface LiveOverlay {
  readonly online: boolean;
  readonly lastSeen: Date | undefined;
  /** This Control's instance id (it holds the stream). */
  readonly heldBy: string;
}

/**
 * A node row as the API shows it, with the hub's live facts when the node is connected here;
 * `versionYanked`: whether the release of its agent version is yanked.
 */
export function nodeMessage(
  record: NodeRecord,
  live?: LiveOverlay,
  activeCampaignId = "",
  versionYanked = false,
): Node {
  const lastSeen = live?.lastSeen ?? record.lastSeen;
  return create(NodeSchema, {
    nodeId: record.id,
    labels: record.labels,
    pool: record.pool,
    platform: record.platform,
    agentVersion: record.agentVersion,
    previousVersion: record.previousVersion,
    bootId: record.bootId,
    capabilities: record.capabilities,
    confirmedSequence: BigInt(record.confirmedSequence),
    ...(record.firstSeen ? { firstSeen: timestampFromDate(record.firstSeen) } : {}),
    ...(lastSeen ? { lastSeen: timestampFromDate(lastSeen) } : {}),
    online: live?.online ?? record.online,
    heldBy: live?.heldBy ?? (record.online ? (record.heldBy ?? "") : ""),
    enabled: record.enabled,
    activeCampaignId,
    resetPending: record.resetAt !== null,
    assignedLabels: record.assignedLabels,
    pending: record.pending,
    revoked: record.revokedAt !== null,
    agentVersionYanked: versionYanked,
    // A join-token enrollment always records its token; a certificate Hello never does.
    certificateEnrolled: record.joinTokenId === null,
    ...(record.trustFrozenSince
      ? {
          trustFrozen: true,
          trustReason: record.trustReason,
          trustFrozenSince: timestampFromDate(record.trustFrozenSince),
        }
      : {}),
  });
}

/** A join token without its secret. */
export function joinTokenMessage(record: JoinTokenRecord): JoinToken {
  return create(JoinTokenSchema, {
    id: record.id,
    description: record.description,
    createdAt: timestampFromDate(record.createdAt),
    expiresAt: timestampFromDate(record.expiresAt),
    revoked: record.revokedAt !== null,
    uses: record.uses,
    nodeIds: record.nodeIds,
    allowReenroll: record.allowReenroll,
    maxUses: record.maxUses ?? 0,
    labels: record.labels,
  });
}

/** A release as the API shows it; served artifacts get their download URL under `publicUrl`. */
export function releaseMessage(
  record: ReleaseRecord,
  publicUrl: string,
  stored?: ReadonlySet<string>,
): Release {
  return create(ReleaseSchema, {
    version: record.version,
    sequence: BigInt(record.sequence),
    expiresAt: timestampFromDate(record.expiresAt),
    registeredAt: timestampFromDate(record.registeredAt),
    artifacts: record.artifacts.map((a) => ({
      platform: a.platform,
      url: a.url || `${publicUrl}${downloadPath(record.version, a.platform)}`,
      sha256: a.sha256,
      size: BigInt(a.size),
      servedByControl: a.url === "",
      pruned: a.url === "" && stored !== undefined && !stored.has(a.sha256),
    })),
    signerKeyIds: record.signerKeyIds,
    envelopeSha256: record.envelopeSha256,
    registeredBy: record.registeredBy,
    ...(record.yankedAt
      ? {
          yankedAt: timestampFromDate(record.yankedAt),
          yankedBy: record.yankedBy ?? "",
          yankReason: record.yankReason ?? "",
        }
      : {}),
  });
}
