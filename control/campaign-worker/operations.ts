/**
 * Building the `agentcontrol.v1.Operation` an action becomes. An upgrade carries the node's
 * platform artifact and the release envelope exactly as registered (payload bytes and
 * signatures), so the Agent verifies everything itself.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  AgentUpgradeSchema,
  type Operation,
  OperationSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { EncodedOperation } from "../agents/operation-frame.js";
import { type Action, assertNever } from "../campaign/index.js";
import type { OfferRelease } from "../campaign-store/index.js";
import type { StoredArtifact } from "../db/entities/index.js";
import { downloadPath } from "../releases/downloads.js";

/** Where a node's upgrade comes from. */
export interface OfferContext {
  /** The target release, undefined when it is no longer registered. */
  readonly release: OfferRelease | undefined;
  /** The node's platform (from its latest Hello). */
  readonly platform: string | undefined;
  /** Base URL of artifacts served by Control. */
  readonly publicUrl: string;
}

/** An operation ready for the outbox, or why it can never be delivered. */
export type BuiltOperation =
  | { readonly ok: true; readonly operation: EncodedOperation; readonly payload: Uint8Array }
  | { readonly ok: false; readonly failure: string };

const ID_FIELD = OperationSchema.field.id.number;
const UPGRADE_FIELD = OperationSchema.field.agentUpgrade.number;

/**
 * Encoded `AgentUpgrade` bodies of each loaded release, by sequence, platform and URL: every
 * node of a platform gets the same body (artifact and envelope), so it is encoded once and
 * framed with each operation id. Held by the release object, so a release loaded again (or
 * from another database) never reuses another's bytes.
 */
const upgradeBodies = new WeakMap<OfferRelease, Map<string, Uint8Array>>();

function upgradeBody(
  release: OfferRelease,
  sequence: number,
  artifact: StoredArtifact,
  url: string,
): Uint8Array {
  let bodies = upgradeBodies.get(release);
  if (bodies === undefined) {
    bodies = new Map();
    upgradeBodies.set(release, bodies);
  }
  const key = JSON.stringify([sequence, artifact.platform, artifact.sha256, url]);
  let body = bodies.get(key);
  if (body === undefined) {
    body = toBinary(
      AgentUpgradeSchema,
      create(AgentUpgradeSchema, {
        version: release.version,
        sequence: BigInt(sequence),
        artifact: {
          platform: artifact.platform,
          url,
          sha256: artifact.sha256,
          size: BigInt(artifact.size),
        },
        envelope: {
          payloadType: release.envelope.payloadType,
          payload: release.envelope.payload,
          signatures: release.envelope.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig })),
        },
      }),
    );
    if (bodies.size >= 64) bodies.clear();
    bodies.set(key, body);
  }
  return body;
}

function encoded(id: string, payload: Uint8Array): BuiltOperation {
  return { ok: true, operation: { id, bytes: payload }, payload };
}

/**
 * Builds the operation of an action. An upgrade fails to build (a send failure, so the node
 * fails with `offer_failed`) when the release is gone or has no artifact for the node's
 * platform; rollback and confirm always build.
 */
export function buildOperation(action: Action, ctx: OfferContext): BuiltOperation {
  let operation: Operation;
  switch (action.kind) {
    case "upgrade": {
      const release = ctx.release;
      if (!release || release.version !== action.version) {
        return { ok: false, failure: `release ${action.version} is not registered` };
      }
      const artifact = release.artifacts.find((a) => a.platform === ctx.platform);
      if (!artifact) {
        return {
          ok: false,
          failure: `release ${action.version} has no artifact for platform ${ctx.platform ?? "(unknown)"}`,
        };
      }
      const url =
        artifact.url || `${ctx.publicUrl}${downloadPath(release.version, artifact.platform)}`;
      // Operation { id, agent_upgrade }: the shared body framed with this operation's id.
      const payload = new BinaryWriter()
        .tag(ID_FIELD, WireType.LengthDelimited)
        .string(action.operationId)
        .tag(UPGRADE_FIELD, WireType.LengthDelimited)
        .bytes(upgradeBody(release, action.sequence, artifact, url))
        .finish();
      return encoded(action.operationId, payload);
    }
    case "rollback":
      operation = create(OperationSchema, {
        id: action.operationId,
        kind: {
          case: "agentRollback",
          value: { version: action.version ?? "", reason: action.reason },
        },
      });
      break;
    case "confirm":
      operation = create(OperationSchema, {
        id: action.operationId,
        kind: {
          case: "agentConfirm",
          value: { version: action.version, sequence: BigInt(action.sequence) },
        },
      });
      break;
    default:
      return assertNever(action, "action");
  }
  return encoded(action.operationId, toBinary(OperationSchema, operation));
}
