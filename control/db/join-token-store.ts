/** Join tokens: issue, list, revoke, and check one presented by an enrolling Agent. */

import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { formatCredential, newSecret, secretMatches, sha256OfText } from "../auth/secrets.js";
import { ControlError } from "../errors.js";
import { JoinTokenEntity, type JoinTokenRecord } from "./entities/index.js";

/** A freshly issued join token: its record and the full credential, shown once. */
export interface IssuedJoinToken {
  readonly record: JoinTokenRecord;
  readonly credential: string;
}

/** Why a presented join token is not valid. */
export type JoinTokenProblem = "unknown" | "expired" | "revoked";

/** What a join token may enroll besides new node ids (see {@link JoinTokenRecord}). */
export interface JoinTokenScope {
  /** When not empty, the only node ids it may enroll, new or existing. */
  readonly nodeIds: readonly string[];
  /** May re-enroll any node id that already exists. */
  readonly allowReenroll: boolean;
}

/** Issues a join token valid for `ttlMs` from `now`. */
export async function issueJoinToken(
  em: EntityManager,
  input: {
    ttlMs: number;
    description: string;
    createdBy: string;
    now: Date;
    scope?: JoinTokenScope;
    /** The most enrollments it allows; undefined: no limit. */
    maxUses?: number;
    /** Labels every node it enrolls is assigned. */
    labels?: Readonly<Record<string, string>>;
  },
): Promise<IssuedJoinToken> {
  const id = randomBytes(8).toString("hex");
  const secret = newSecret();
  const record = em.create(JoinTokenEntity, {
    id,
    secretHash: sha256OfText(secret),
    description: input.description,
    createdAt: input.now,
    expiresAt: new Date(input.now.getTime() + input.ttlMs),
    revokedAt: null,
    uses: 0,
    maxUses: input.maxUses ?? null,
    labels: { ...(input.labels ?? {}) },
    createdBy: input.createdBy,
    nodeIds: [...(input.scope?.nodeIds ?? [])],
    allowReenroll: input.scope?.allowReenroll ?? false,
  });
  await em.flush();
  return { record, credential: formatCredential("ajt", id, secret) };
}

/**
 * Lists join tokens, newest first, with `uses` = the enrollments each counted (written by
 * the enrollment statement itself, node-enrollment.ts).
 */
export async function listJoinTokens(em: EntityManager): Promise<JoinTokenRecord[]> {
  return await em.find(JoinTokenEntity, {}, { orderBy: { createdAt: "desc" } });
}

/** Revokes a join token at `now`; revoking twice keeps the first time. */
export async function revokeJoinToken(
  em: EntityManager,
  id: string,
  now: Date,
): Promise<JoinTokenRecord> {
  const record = await em.findOne(JoinTokenEntity, { id });
  if (!record) throw new ControlError("token_not_found", `no join token with id "${id}"`);
  record.revokedAt ??= now;
  await em.flush();
  return record;
}

/**
 * Judges a presented join token's secret against its stored row (undefined: no such id):
 * the scope it grants, or the problem. An unknown id and a wrong secret read the same.
 */
export function judgeJoinToken(
  row: { secretHash: string; revokedAt: Date | null; expiresAt: Date } | undefined,
  secret: string,
  now: Date,
): { ok: true } | { ok: false; problem: JoinTokenProblem } {
  if (!row || !secretMatches(secret, row.secretHash)) return { ok: false, problem: "unknown" };
  if (row.revokedAt) return { ok: false, problem: "revoked" };
  if (row.expiresAt.getTime() <= now.getTime()) return { ok: false, problem: "expired" };
  return { ok: true };
}
