/**
 * The checks an Agent makes before it accepts an upgrade: the envelope verifies against
 * its own pins, and the operation agrees with what was signed (version, sequence, its
 * platform's artifact), and the release is not older than what it confirmed.
 */
import { createHash } from "node:crypto";
import {
  compareSemver,
  isReleaseError,
  isSemver,
  type ReleaseHealth,
  type VerifiedRelease,
  verifyEnvelope,
} from "../../control/shared/release/index.js";
import type { AgentUpgrade } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** The refusal codes an agent reports in REFUSED. */
export type RefusalCode =
  | "untrusted_release"
  | "manifest_mismatch"
  | "wrong_platform"
  | "sequence_rollback"
  | "artifact_mismatch";

/** An upgrade the agent may accept, with the artifact it will download. */
export interface AcceptedUpgrade {
  version: string;
  sequence: bigint;
  artifact: { url: string; sha256: string; size: number };
  /** The signed health checks the new version must pass before it reports success. */
  health?: ReleaseHealth;
  /**
   * The signed manifest says the release carries its supervisor: once the new version is
   * installed, its artifact is tried as the node's supervisor (never set by anything but
   * the verified manifest).
   */
  supervisor?: true;
}

/** The verdict on one upgrade operation. */
export type UpgradeVerdict =
  | { ok: true; upgrade: AcceptedUpgrade }
  | { ok: false; code: RefusalCode; message: string };

/** What the agent trusts and where it stands. */
export interface UpgradeCheckContext {
  platform: string;
  confirmedSequence: bigint;
  /**
   * The highest sequence the agent ever installed: an upgrade below it is refused
   * (`sequence_rollback`; going back is a rollback, not an upgrade). Absent: no such floor.
   */
  installedSequence?: bigint;
  /**
   * The version the agent runs: an upgrade to a version that precedes it (SemVer) is refused
   * `sequence_rollback`, floor or no floor (a node installed by hand has none). Absent: no
   * such check.
   */
  runningVersion?: string;
  pins: readonly string[];
  threshold: number;
  now: Date;
}

/**
 * Verifies envelopes with memoisation: the same exact envelope bytes checked against the
 * same pins and threshold give the same answer, so a fleet in one process does the
 * ed25519 work once per release instead of once per agent. Expiry is re-checked against
 * each caller's `now`.
 */
export class ReleaseVerifier {
  readonly #memo = new Map<string, Promise<VerifiedRelease | Error>>();

  /** Checks `op` for an agent in `context`. Never throws. */
  async check(op: AgentUpgrade, context: UpgradeCheckContext): Promise<UpgradeVerdict> {
    const envelope = op.envelope;
    if (envelope === undefined) return refuse("untrusted_release", "the upgrade has no envelope");
    if (context.pins.length === 0) {
      return refuse("untrusted_release", "the agent has no release pins configured");
    }
    const verified = await this.#verify(envelope, context);
    if (verified instanceof Error) {
      const reason = isReleaseError(verified) ? verified.reason : "error";
      return refuse("untrusted_release", `${reason}: ${verified.message}`);
    }
    if (verified.expiresAt.getTime() <= context.now.getTime()) {
      return refuse(
        "untrusted_release",
        `expired: the release expired at ${verified.manifest.expires}`,
      );
    }
    const manifest = verified.manifest;
    if (manifest.version !== op.version || BigInt(manifest.sequence) !== op.sequence) {
      return refuse(
        "manifest_mismatch",
        `the operation names ${op.version} #${op.sequence}, the signed manifest ${manifest.version} #${manifest.sequence}`,
      );
    }
    const artifact = op.artifact;
    if (artifact === undefined || artifact.platform !== context.platform) {
      return refuse(
        "wrong_platform",
        `the artifact is for ${artifact?.platform || "no platform"}, this agent runs ${context.platform}`,
      );
    }
    const signed = manifest.artifacts[context.platform];
    if (signed === undefined) {
      return refuse("wrong_platform", `the release has no artifact for ${context.platform}`);
    }
    if (BigInt(manifest.sequence) < context.confirmedSequence) {
      return refuse(
        "sequence_rollback",
        `release sequence ${manifest.sequence} is below the confirmed sequence ${context.confirmedSequence}`,
      );
    }
    const installed = context.installedSequence;
    if (installed !== undefined && BigInt(manifest.sequence) < installed) {
      return refuse(
        "sequence_rollback",
        `release sequence ${manifest.sequence} is below sequence ${installed}, the highest this node has installed (going back is a rollback to its previous release)`,
      );
    }
    const running = context.runningVersion;
    if (
      running !== undefined &&
      isSemver(running) &&
      isSemver(manifest.version) &&
      compareSemver(manifest.version, running) < 0
    ) {
      return refuse(
        "sequence_rollback",
        `release ${manifest.version} is older than ${running}, the version this node runs (going back is a rollback to its previous release)`,
      );
    }
    if (signed.sha256 !== artifact.sha256 || BigInt(signed.size) !== artifact.size) {
      return refuse(
        "artifact_mismatch",
        `the operation's artifact (${artifact.sha256}, ${artifact.size} bytes) is not the signed one (${signed.sha256}, ${signed.size} bytes)`,
      );
    }
    return {
      ok: true,
      upgrade: {
        version: manifest.version,
        sequence: BigInt(manifest.sequence),
        artifact: {
          url: artifact.url || signed.url || "",
          sha256: signed.sha256,
          size: signed.size,
        },
        ...(manifest.health === undefined ? {} : { health: manifest.health }),
        ...(manifest.supervisor === true ? { supervisor: true } : {}),
      },
    };
  }

  #verify(
    envelope: NonNullable<AgentUpgrade["envelope"]>,
    context: UpgradeCheckContext,
  ): Promise<VerifiedRelease | Error> {
    const hash = createHash("sha256");
    const part = (bytes: string | Uint8Array) => {
      hash.update(`${typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.byteLength}:`);
      hash.update(bytes);
    };
    part(envelope.payloadType);
    part(envelope.payload);
    for (const signature of envelope.signatures) {
      part(signature.keyid);
      part(signature.sig);
    }
    part(`${context.threshold}|${context.pins.join(",")}`);
    const key = hash.digest("hex");
    let result = this.#memo.get(key);
    if (result === undefined) {
      if (this.#memo.size >= 256) this.#memo.clear();
      result = verifyEnvelope(
        {
          payloadType: envelope.payloadType,
          payload: envelope.payload,
          signatures: envelope.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig })),
        },
        { pins: context.pins, threshold: context.threshold, now: context.now },
      ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
      this.#memo.set(key, result);
    }
    return result;
  }
}

function refuse(code: RefusalCode, message: string): UpgradeVerdict {
  return { ok: false, code, message };
}
