/**
 * Enrollment with a join token. A join token is spread to every machine being provisioned,
 * so it must not be a key to every enrolled node: by default it enrolls only node ids that
 * do not exist yet. Re-enrolling an existing node (which rotates its token, locking out
 * whoever held the old one) takes an operator's explicit step: a reset of that node, a join
 * token created for named node ids, or one created to allow re-enrollment. Every
 * re-enrollment is audited (docs/decisions.md, "Agent stream").
 */
import { formatCredential, newSecret, sha256OfText } from "../auth/secrets.js";
import type { JoinTokenScope } from "../db/join-token-store.js";
import type {
  NodeHello,
  NodeStore,
  ReenrollGrant,
  ReenrollVia,
  TokenRefusal,
} from "../db/node-store.js";
import { ControlError } from "../errors.js";

/** What a join token's scope lets it do with one node id, before the registry is asked. */
export type ScopeDecision =
  | { readonly ok: true; readonly grant: ReenrollGrant | null }
  | { readonly ok: false; readonly message: string };

/**
 * Whether a join token may enroll `nodeId` at all, and its leave to re-enroll the node if it
 * exists: a token for named ids may enroll (and re-enroll) only those; a token allowing
 * re-enrollment may re-enroll any id; any other token gets no leave (only new ids, or a
 * node an operator reset).
 */
export function scopeDecision(
  joinTokenId: string,
  scope: JoinTokenScope,
  nodeId: string,
): ScopeDecision {
  if (scope.nodeIds.length > 0) {
    if (scope.nodeIds.includes(nodeId)) return { ok: true, grant: "named" };
    return {
      ok: false,
      message: `join token ${joinTokenId} was created for other node ids and may not enroll node "${nodeId}"`,
    };
  }
  return { ok: true, grant: scope.allowReenroll ? "allow_reenroll" : null };
}

/**
 * The refusal an Agent sees when its join token may not re-enroll an existing node. It names
 * both ways back and says that a revoked node has only the first (the store does not tell
 * which of the two held the node back, and the Agent learns nothing more from it).
 */
export function alreadyEnrolledMessage(nodeId: string): string {
  return `node "${nodeId}" is already enrolled; an operator must reset it (agentctl node reset ${nodeId}) or, unless it was revoked, issue a join token that allows re-enrollment`;
}

/**
 * The refusal an Agent sees when its join token, as committed when the enrollment was
 * written, no longer allows it (revoked or expired since the handshake began, or used up).
 */
export function tokenRefusalMessage(problem: TokenRefusal, maxUses: number): string {
  switch (problem) {
    case "unknown":
      return "unknown join token";
    case "revoked":
      return "join token has been revoked";
    case "expired":
      return "join token has expired";
    case "used_up":
      return `join token has been used up (${maxUses} of ${maxUses} enrollments): create another with agentctl token create --max-uses N`;
  }
}

/** A join-token stream's Hello to enroll. */
export interface JoinEnrollment {
  readonly joinTokenId: string;
  readonly scope: JoinTokenScope;
  readonly hello: NodeHello;
  /** The Hello's enrollment key ("" without one). */
  readonly enrollmentKey: string;
  readonly sessionId: string;
  /** The stream's peer address, for the audit log. */
  readonly peer: string;
  readonly now: Date;
}

/** An accepted enrollment: the node token to hand over (shown once) and what happened. */
export interface Enrolled {
  readonly nodeToken: string;
  readonly outcome: "created" | "reenrolled";
  /** For a re-enrollment, what allowed it. */
  readonly via?: ReenrollVia;
  /** The node awaits an administrator's approval (`enrollment.requireApproval`). */
  readonly pending: boolean;
}

/**
 * Enrolls the node a join-token stream names, issuing it a new node token.
 * @throws ControlError `permission_denied` when the token may not enroll this id, or the
 * node exists and neither the token nor an operator's reset lets it re-enroll; nothing is
 * written then, and the node's token keeps working.
 * @throws ControlError `unauthenticated` when the token, re-checked in the enrollment
 * statement, is revoked, expired or used up ({@link tokenRefusalMessage}); nothing written.
 */
export async function enrollWithJoinToken(
  nodes: NodeStore,
  enrollment: JoinEnrollment,
): Promise<Enrolled> {
  const nodeId = enrollment.hello.nodeId;
  const decision = scopeDecision(enrollment.joinTokenId, enrollment.scope, nodeId);
  if (!decision.ok) throw new ControlError("permission_denied", decision.message);
  const secret = newSecret();
  const outcome = await nodes.enroll({
    hello: enrollment.hello,
    sessionId: enrollment.sessionId,
    joinTokenId: enrollment.joinTokenId,
    tokenHash: sha256OfText(secret),
    grant: decision.grant,
    enrollmentKeyHash: enrollment.enrollmentKey ? sha256OfText(enrollment.enrollmentKey) : null,
    peer: enrollment.peer,
    now: enrollment.now,
  });
  switch (outcome.kind) {
    case "refused":
      throw new ControlError("permission_denied", alreadyEnrolledMessage(nodeId));
    case "token_refused":
      throw new ControlError(
        "unauthenticated",
        tokenRefusalMessage(outcome.problem, outcome.maxUses),
      );
    case "created":
      return {
        nodeToken: formatCredential("ant", nodeId, secret),
        outcome: "created",
        pending: outcome.pending,
      };
    case "reenrolled":
      return {
        nodeToken: formatCredential("ant", nodeId, secret),
        outcome: "reenrolled",
        via: outcome.via,
        pending: outcome.pending,
      };
  }
}
