/**
 * The release registry: accepts an offline-signed envelope only under SPEC §3's rules and
 * keeps the release channel moving forward (every new sequence above all registered ones).
 * Registrations are serialised by a transaction-scoped advisory lock, so two concurrent
 * registrations cannot both pass the sequence check.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../clock.js";
import { type Actor, stageAudit } from "../db/audit-log.js";
import type { Database } from "../db/database.js";
import { ReleaseEntity, type ReleaseRecord, type StoredArtifact } from "../db/entities/index.js";
import { ControlError } from "../errors.js";
import { parseEnvelope, ReleaseError, sha256Hex, verifyEnvelope } from "../shared/release/index.js";

/** Dependencies of the registry. */
export interface ReleaseRegistryDeps {
  readonly db: Database;
  readonly clock: Clock;
  /** Pinned public keys (`ed25519:…`) and how many must sign. */
  readonly pins: readonly string[];
  readonly threshold: number;
}

/** A registration request: the envelope file and uploaded artifact files by platform. */
export interface RegisterInput {
  readonly envelope: Uint8Array;
  readonly files: ReadonlyMap<string, Uint8Array>;
  readonly actor: Actor;
}

/** The advisory lock a registration (and a prune) holds: one change of the registry at a time. */
export const REGISTRY_LOCK_KEY = 7_443_001;

/**
 * Verifies and registers a release. The identical envelope (same bytes) registered again is
 * a no-op, checked before expiry and sequence, so it succeeds even once expired.
 * @returns the stored release and whether it is new (false: this exact envelope again).
 * @throws ControlError `release_rejected` naming the refusal, or `release_conflict`.
 */
export async function registerRelease(
  deps: ReleaseRegistryDeps,
  input: RegisterInput,
): Promise<{ record: ReleaseRecord; created: boolean }> {
  if (deps.pins.length === 0) {
    throw new ControlError(
      "release_rejected",
      "no release keys are pinned: set AGENT_CONTROL_RELEASE_PINS (or release.pins) to the signers' public keys",
    );
  }
  const envelopeSha256 = sha256Hex(input.envelope);
  // Identity first: these exact bytes were verified when they were registered, so
  // registering them again is a no-op even once they have expired or a newer release
  // exists (the expiry and sequence checks are for new releases). Uploaded files are not
  // needed then, unless a prune (agentctl release prune) deleted them: those that match the
  // registered artifacts come back.
  const registered = await deps.db.em().findOne(ReleaseEntity, { envelopeSha256 });
  if (registered) {
    await restoreFiles(deps, registered, input.files);
    return { record: registered, created: false };
  }
  const now = deps.clock.now();
  const verified = await verifyOrRefuse(input.envelope, deps, now);
  const { manifest } = verified;
  const artifacts: StoredArtifact[] = [];
  const uploads: Array<{ sha256: string; content: Uint8Array }> = [];
  for (const [platform, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.url) {
      artifacts.push({ platform, sha256: artifact.sha256, size: artifact.size, url: artifact.url });
      continue;
    }
    const content = input.files.get(platform);
    if (!content) {
      throw new ControlError(
        "release_rejected",
        `artifact for ${platform} names the file "${artifact.file}" but it was not uploaded (agentctl release register --artifacts DIR)`,
      );
    }
    if (content.byteLength !== artifact.size || sha256Hex(content) !== artifact.sha256) {
      throw new ControlError(
        "release_rejected",
        `uploaded file for ${platform} does not match the manifest (size ${content.byteLength} vs ${artifact.size}, or sha256 differs)`,
      );
    }
    artifacts.push({ platform, sha256: artifact.sha256, size: artifact.size, url: "" });
    uploads.push({ sha256: artifact.sha256, content });
  }
  for (const platform of input.files.keys()) {
    if (!(platform in manifest.artifacts)) {
      throw new ControlError(
        "release_rejected",
        `uploaded a file for ${platform}, which the manifest does not list`,
      );
    }
  }

  return await deps.db.em().transactional(async (em) => {
    await em.execute("select pg_advisory_xact_lock(?)", [REGISTRY_LOCK_KEY]);
    // Again under the lock: a concurrent registration of the same bytes may have won.
    const same = await em.findOne(ReleaseEntity, { envelopeSha256 });
    if (same) return { record: same, created: false };
    const byVersion = await em.findOne(ReleaseEntity, { version: manifest.version });
    if (byVersion) {
      throw new ControlError(
        "release_conflict",
        `version ${manifest.version} is already registered with a different envelope (sequence ${byVersion.sequence})`,
      );
    }
    const newest = await newestRelease(em);
    if (newest && manifest.sequence <= newest.sequence) {
      throw new ControlError(
        "release_rejected",
        `sequence ${manifest.sequence} is not above the newest registered sequence ${newest.sequence} (version ${newest.version}): the release channel never moves back`,
      );
    }
    for (const upload of uploads) await storeFile(em, upload);
    const record = em.create(ReleaseEntity, {
      version: manifest.version,
      sequence: manifest.sequence,
      envelope: Buffer.from(input.envelope),
      envelopeSha256,
      expiresAt: verified.expiresAt,
      registeredAt: now,
      registeredBy: input.actor.name,
      signerKeyIds: verified.signerKeyIds,
      artifacts,
    });
    stageAudit(em, {
      actor: input.actor,
      action: "release.register",
      time: now,
      message: `release ${manifest.version} (sequence ${manifest.sequence}) registered, signed by ${verified.signerKeyIds.length} pinned key(s)`,
      detail: { version: manifest.version, sequence: manifest.sequence, envelopeSha256 },
    });
    await em.flush();
    return { record, created: true };
  });
}

/**
 * Stores again the uploaded files of an already registered release whose bytes a prune
 * deleted; a file that does not match the registered artifact of its platform is refused.
 */
async function restoreFiles(
  deps: ReleaseRegistryDeps,
  record: ReleaseRecord,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<void> {
  const uploads: Array<{ sha256: string; content: Uint8Array }> = [];
  for (const artifact of record.artifacts) {
    const content = files.get(artifact.platform);
    if (artifact.url !== "" || content === undefined) continue;
    if (content.byteLength !== artifact.size || sha256Hex(content) !== artifact.sha256) {
      throw new ControlError(
        "release_rejected",
        `uploaded file for ${artifact.platform} does not match the registered release ${record.version}`,
      );
    }
    uploads.push({ sha256: artifact.sha256, content });
  }
  if (uploads.length === 0) return;
  await deps.db.em().transactional(async (em) => {
    for (const upload of uploads) await storeFile(em, upload);
  });
}

/** Stores one artifact file's bytes, unless a file with its sha256 is stored already. */
async function storeFile(
  em: EntityManager,
  upload: { readonly sha256: string; readonly content: Uint8Array },
): Promise<void> {
  await em.execute(
    "insert into artifact_files (sha256, size, content) values (?, ?, ?) on conflict (sha256) do nothing",
    [upload.sha256, upload.content.byteLength, Buffer.from(upload.content)],
  );
}

/** The release with the highest sequence, if any. */
export async function newestRelease(em: EntityManager): Promise<ReleaseRecord | null> {
  const [newest] = await em.find(ReleaseEntity, {}, { orderBy: { sequence: "desc" }, limit: 1 });
  return newest ?? null;
}

async function verifyOrRefuse(bytes: Uint8Array, deps: ReleaseRegistryDeps, now: Date) {
  try {
    const envelope = parseEnvelope(bytes);
    return await verifyEnvelope(envelope, { pins: deps.pins, threshold: deps.threshold, now });
  } catch (error) {
    if (error instanceof ReleaseError) {
      throw new ControlError(
        "release_rejected",
        `release refused (${error.reason}): ${error.message}`,
      );
    }
    throw error;
  }
}
