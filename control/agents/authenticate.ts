/**
 * Who is on the other end of an agent stream: a node with its node token, a node with a
 * verified client certificate (mTLS), or a new node enrolling with a join token. The node
 * id comes from the credential, never from Hello alone.
 */
import type { PeerCertificate } from "node:tls";
import { bearerToken, parseCredential, secretMatches } from "../auth/secrets.js";
import type { Clock } from "../clock.js";
import type { JoinTokenReader } from "../db/join-token-reader.js";
import { type JoinTokenScope, judgeJoinToken } from "../db/join-token-store.js";
import type { NodeStore } from "../db/node-store.js";
import { ControlError } from "../errors.js";
import {
  type CertificateIdentity,
  certificateLabels,
  nodeOfCertificate,
} from "../tls/node-identity.js";

/** An authenticated stream credential. */
export type StreamIdentity =
  /** A node token; `pending`: the node awaits an administrator's approval. */
  | { readonly kind: "node"; readonly nodeId: string; readonly pending?: boolean }
  /** A verified client certificate naming the node (enrolls it on first connect). */
  | {
      readonly kind: "certificate";
      readonly nodeId: string;
      readonly certificate: CertificateFacts;
    }
  /** A join token, with what it may enroll besides new node ids. */
  | { readonly kind: "join"; readonly joinTokenId: string; readonly scope: JoinTokenScope };

/** What Control records of a client certificate, to refuse it once its node is revoked. */
export interface CertificateFacts {
  /** SHA-256 fingerprint, as Node.js writes it (`AB:CD:…`). */
  readonly fingerprint: string;
  /** The certificate's notAfter: a denylist entry lasts until then. */
  readonly expiresAt: Date;
  /** The labels it assigns (SAN URIs agentcontrol://label/K=V), trusted as a join token's. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** Dependencies of {@link authenticateStream}. */
export interface AuthenticateDeps {
  readonly joinTokens: JoinTokenReader;
  readonly nodes: NodeStore;
  readonly clock: Clock;
  /**
   * Which certificate forms name a node (`enrollment.certificateIdentity`); undefined takes the
   * default forms. Required, so every listener that authenticates nodes names them alike.
   */
  readonly certificateIdentity: CertificateIdentity | undefined;
  /**
   * True when the fingerprint is on the denylist of revoked nodes' certificates at `now`.
   * Required: a listener that forgot it would let a revoked node's certificate in.
   */
  readonly certificateDenied: (fingerprint: string, now: Date) => Promise<boolean>;
}

/**
 * Checks the credential of a stream: a verified client certificate (`peerCertificate`,
 * only ever set for a certificate that chains to the configured client CA) wins over any
 * `authorization` metadata; otherwise the bearer token decides.
 * @throws ControlError `unauthenticated` saying what is missing or wrong.
 */
export async function authenticateStream(
  authorization: string | undefined,
  deps: AuthenticateDeps,
  peerCertificate?: PeerCertificate,
): Promise<StreamIdentity> {
  if (peerCertificate) {
    const named = nodeOfCertificate(peerCertificate, deps.certificateIdentity);
    if (!named.ok) throw new ControlError("unauthenticated", named.problem);
    const labelled = certificateLabels(peerCertificate);
    if (!labelled.ok) throw new ControlError("unauthenticated", labelled.problem);
    const certificate = {
      fingerprint: peerCertificate.fingerprint256,
      expiresAt: new Date(peerCertificate.valid_to),
      labels: labelled.labels,
    };
    if (await deps.certificateDenied(certificate.fingerprint, deps.clock.now())) {
      throw new ControlError(
        "unauthenticated",
        `client certificate has been revoked (node "${named.nodeId}" was revoked by an administrator): issue a new one and enroll again`,
      );
    }
    return { kind: "certificate", nodeId: named.nodeId, certificate };
  }
  const token = bearerToken(authorization);
  if (!token) {
    throw new ControlError(
      "unauthenticated",
      "missing credential: send metadata 'authorization: Bearer <join token or node token>'",
    );
  }
  const credential = parseCredential(token);
  if (!credential) throw new ControlError("unauthenticated", "malformed credential");
  if (credential.kind === "ajt") {
    const row = await deps.joinTokens.read(credential.id);
    const check = judgeJoinToken(row, credential.secret, deps.clock.now());
    if (!row || !check.ok) {
      const reason = {
        unknown: "unknown join token",
        expired: "join token has expired",
        revoked: "join token has been revoked",
      }[check.ok ? "unknown" : check.problem];
      throw new ControlError("unauthenticated", reason);
    }
    return { kind: "join", joinTokenId: credential.id, scope: row.scope };
  }
  const row = await deps.nodes.credential(credential.id);
  if (!row?.tokenHash || !secretMatches(credential.secret, row.tokenHash)) {
    throw new ControlError(
      "unauthenticated",
      "node token is not valid: enroll again with a join token",
    );
  }
  return { kind: "node", nodeId: row.id, pending: row.pending };
}
