/**
 * Why a release envelope, manifest, key or pin was refused. A closed set: every refusal
 * of the release module carries exactly one of these, so callers (Control's error table,
 * agentctl, the agent simulator) can switch on it exhaustively.
 *
 * - `malformed_envelope`: not DSSE JSON of the expected shape (missing or extra fields,
 *   non-canonical base64, too large, too many signatures).
 * - `malformed_manifest`: the payload is not a strict JSON object of the manifest shape
 *   (invalid UTF-8, duplicate keys, unknown keys, wrong field types).
 * - `wrong_payload_type`: `payloadType` is not {@link RELEASE_PAYLOAD_TYPE}.
 * - `wrong_product`: `product` is not `"agent"`.
 * - `bad_version`: `version` is not semantic-versioning 2.0.0.
 * - `bad_sequence`: `sequence` is not a positive safe integer.
 * - `bad_expires`: `expires` is not an RFC 3339 date-time (or not a valid Date when building).
 * - `expired`: the manifest's `expires` is at or before the verification time.
 * - `unknown_platform`: an artifact key is not one of {@link KNOWN_PLATFORMS}.
 * - `bad_artifact`: an artifact's sha256, size, url or file is invalid, or there are none.
 * - `insufficient_signatures`: fewer than `threshold` valid signatures from distinct pinned keys.
 * - `bad_key`: a pin, public key or private key (or key file) is not a valid ed25519 key.
 * - `bad_threshold`: the threshold is not a positive integer, or exceeds the distinct pins.
 */
export type ReleaseRefusal =
  | "malformed_envelope"
  | "malformed_manifest"
  | "wrong_payload_type"
  | "wrong_product"
  | "bad_version"
  | "bad_sequence"
  | "bad_expires"
  | "expired"
  | "unknown_platform"
  | "bad_artifact"
  | "insufficient_signatures"
  | "bad_key"
  | "bad_threshold";

/** Every {@link ReleaseRefusal}, in declaration order (for tables and exhaustive tests). */
export const RELEASE_REFUSALS: readonly ReleaseRefusal[] = [
  "malformed_envelope",
  "malformed_manifest",
  "wrong_payload_type",
  "wrong_product",
  "bad_version",
  "bad_sequence",
  "bad_expires",
  "expired",
  "unknown_platform",
  "bad_artifact",
  "insufficient_signatures",
  "bad_key",
  "bad_threshold",
];

/**
 * The only error the release module throws on bad input. `reason` is machine-readable;
 * `message` says specifically what is wrong, for a person, and never contains key
 * material (public keys appear only as key ids or pins).
 */
export class ReleaseError extends Error {
  /** Which rule refused the input. */
  readonly reason: ReleaseRefusal;

  constructor(reason: ReleaseRefusal, message: string) {
    super(message);
    this.name = "ReleaseError";
    this.reason = reason;
  }
}

/** True when `error` is a {@link ReleaseError}, optionally with the given reason. */
export function isReleaseError(error: unknown, reason?: ReleaseRefusal): error is ReleaseError {
  return error instanceof ReleaseError && (reason === undefined || error.reason === reason);
}
