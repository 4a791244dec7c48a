/**
 * Signed Agent releases: the envelope, manifest, keys, signing and verification shared by
 * Control, `agentctl` and the agent simulator (SPEC §3). Import only from this file.
 *
 * ## Formats
 *
 * **Manifest** (the signed payload): UTF-8 JSON object with exactly the fields
 * `product` (`"agent"`), `version` (SemVer 2.0.0, no `v`), `sequence` (positive safe
 * integer), `expires` (RFC 3339 date-time, upper-case `T`/`Z`, no leap second) and
 * `artifacts` (object keyed by platform from {@link KNOWN_PLATFORMS}, at least one; each
 * `{sha256: 64 lower-case hex, size: positive safe integer, url | file}` with exactly one of
 * `url` (absolute https/http, no credentials) or `file` (relative `/`-separated path, no
 * `.`/`..`)), and optionally `health` (the checks the Agent runs after the new version
 * starts, see {@link ReleaseHealth}; an Agent that predates it refuses such a manifest as
 * malformed, which fails safe). Unknown fields, duplicate keys and invalid UTF-8 are refused, not ignored:
 * a verifier never silently skips what a signer meant; a new field needs a new payload
 * type. {@link buildManifest} writes the canonical form (sorted keys, 2-space indent,
 * trailing newline), but any byte spelling that parses is accepted: signatures cover the
 * exact bytes, never a re-serialisation.
 *
 * **Envelope file** (DSSE, https://github.com/secure-systems-lab/dsse):
 * ```json
 * { "payloadType": "application/vnd.agentcontrol.release.v1+json",
 *   "payload": "<standard base64 of the manifest bytes>",
 *   "signatures": [ { "keyid": "<16 hex chars>", "sig": "<standard base64, 64 bytes>" } ] }
 * ```
 * Strict: exactly these fields, canonical padded standard base64, at most
 * {@link MAX_SIGNATURES} signatures and {@link MAX_ENVELOPE_BYTES} bytes. Each signature is
 * ed25519 over `PAE = "DSSEv1" SP LEN(type) SP type SP LEN(payload) SP payload`
 * ({@link preAuthEncoding}). An unsigned envelope ({@link createEnvelope}) round-trips, so
 * several key holders can sign the same file in turn ({@link signEnvelope} is idempotent
 * per key).
 *
 * **Pin** (public key, as configured in Control and the Agent): `ed25519:` followed by the
 * unpadded base64url of the 32-byte public key, 51 characters in all, e.g.
 * `ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo`. The key itself, not a hash of it,
 * so a verifier needs nothing else. Small-order and non-canonical points are refused.
 *
 * **Key id**: first 16 hex characters of SHA-256(public key). A hint that lets a verifier
 * try the likely key first; it never decides anything.
 *
 * **Private key file** (written by `agentctl release keygen` with mode 0600):
 * `{"kind": "agent-control-release-signing-key", "alg": "ed25519", "key": "<standard base64 of the 32-byte seed>"}`
 * plus a trailing newline; exactly these fields.
 *
 * ## Verification order ({@link verifyEnvelope})
 *
 * options (pins `bad_key`, threshold `bad_threshold`) → envelope shape
 * (`malformed_envelope`) → payload type (`wrong_payload_type`) → signatures and threshold
 * (`insufficient_signatures`) → manifest (`malformed_manifest`, `wrong_product`,
 * `bad_version`, `bad_sequence`, `bad_expires`, `unknown_platform`, `bad_artifact`) →
 * expiry (`expired`). A forged or unsigned payload therefore never yields a refusal more
 * specific than `insufficient_signatures`. Sequence monotonicity and `confirmed_sequence`
 * are the caller's (Control's registry, the Agent's state), not this module's.
 *
 * @module
 */
export { decodeBase64, decodeBase64Url, encodeBase64, encodeBase64Url } from "./base64.js";
export { sha256, sha256Hex } from "./digest.js";
export {
  assertEnvelopeShape,
  createEnvelope,
  type Envelope,
  type EnvelopeSignature,
  MAX_ENVELOPE_BYTES,
  MAX_KEYID_LENGTH,
  MAX_SIGNATURES,
  parseEnvelope,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
  serializeEnvelope,
} from "./envelope.js";
export { isReleaseError, RELEASE_REFUSALS, ReleaseError, type ReleaseRefusal } from "./errors.js";
export {
  type CommandHealthCheck,
  HEALTH_LIMITS,
  type HealthCheck,
  type HttpHealthCheck,
  healthBudgetMs,
  parseHealth,
  type ReleaseHealth,
} from "./health.js";
export {
  ED25519_KEY_LENGTH,
  ED25519_SIGNATURE_LENGTH,
  formatPin,
  generateKeyPair,
  keyIdOf,
  PIN_PREFIX,
  PRIVATE_KEY_KIND,
  parsePin,
  parsePrivateKey,
  publicKeyOf,
  type ReleaseKeyPair,
  serializePrivateKey,
} from "./keys.js";
export {
  buildManifest,
  type ManifestArtifact,
  type ManifestInput,
  parseManifest,
  RELEASE_PRODUCT,
  type ReleaseManifest,
} from "./manifest.js";
export { isKnownPlatform, KNOWN_PLATFORMS } from "./platforms.js";
export { compareSemver, isSemver, MAX_VERSION_LENGTH } from "./semver.js";
export { signEnvelope } from "./sign.js";
export { canonicalJson } from "./strict-json.js";
export { formatRfc3339, parseRfc3339 } from "./timestamp.js";
export {
  type VerifiedRelease,
  type VerifyOptions,
  verifyEnvelope,
  verifyStrict,
} from "./verify.js";
