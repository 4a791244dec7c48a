/**
 * The release manifest: what a signed release says. Parsed strictly; built canonically.
 */
import { ReleaseError } from "./errors.js";
import { parseHealth, type ReleaseHealth } from "./health.js";
import { isKnownPlatform, KNOWN_PLATFORMS } from "./platforms.js";
import { isSemver } from "./semver.js";
import { canonicalJson, isJsonObject, parseStrictJson } from "./strict-json.js";
import { formatRfc3339, parseRfc3339 } from "./timestamp.js";

/**
 * One platform's binary. Exactly one of `url` (absolute `https:` or `http:` URL, no
 * credentials; integrity comes from `sha256`, not the transport) or `file` (a relative
 * path with `/` separators, resolved against the directory holding the envelope; no `.`
 * or `..` segments). `sha256` is 64 lower-case hex characters; `size` is the exact byte
 * length, a positive safe integer (the Agent downloads at most this many bytes).
 */
export interface ManifestArtifact {
  sha256: string;
  size: number;
  url?: string;
  file?: string;
}

/**
 * A release of the Agent. `version` is SemVer 2.0.0; `sequence` a positive safe integer
 * that orders releases on the channel (Control only accepts increasing sequences);
 * `expires` an RFC 3339 date-time after which the release is refused; `artifacts` maps
 * each platform in {@link KNOWN_PLATFORMS} to its binary (at least one).
 */
export interface ReleaseManifest {
  product: "agent";
  version: string;
  sequence: number;
  expires: string;
  artifacts: Record<string, ManifestArtifact>;
  /** The checks the Agent runs after the new version starts (absent: none). */
  health?: ReleaseHealth;
  /**
   * The release carries its supervisor: its artifact (the same program runs as Agent and as
   * supervisor) is also installed as the node's supervisor once it has brought the Agent
   * back. Only `true` is kept; absent or false: the supervisor is left as it is.
   */
  supervisor?: true;
}

/** The only product a manifest may name. */
export const RELEASE_PRODUCT = "agent";

const MANIFEST_KEYS = new Set([
  "product",
  "version",
  "sequence",
  "expires",
  "artifacts",
  "health",
  "supervisor",
]);
const ARTIFACT_KEYS = new Set(["sha256", "size", "url", "file"]);
const SHA256_HEX = /^[0-9a-f]{64}$/;
const FILE_PATH = /^[A-Za-z0-9._+-]+(?:\/[A-Za-z0-9._+-]+)*$/;
const MAX_URL_LENGTH = 2048;
const MAX_FILE_LENGTH = 255;

/**
 * Parses and validates manifest bytes. Guarantees on return: the bytes are strict UTF-8
 * JSON with no duplicate keys; the top level and every artifact have exactly the known
 * keys (unknown keys are refused, not ignored: a verifier must never skip a field a signer
 * meant; new fields come with a new payload type); every field satisfies
 * {@link ReleaseManifest} and {@link ManifestArtifact}. Does NOT check expiry against any
 * clock. Throws {@link ReleaseError} with `malformed_manifest`, `wrong_product`,
 * `bad_version`, `bad_sequence`, `bad_expires`, `unknown_platform` or `bad_artifact`.
 */
export function parseManifest(payload: Uint8Array): ReleaseManifest {
  const parsed = parseStrictJson(payload);
  if (!parsed.ok) throw new ReleaseError("malformed_manifest", `the manifest ${parsed.problem}`);
  const doc = parsed.value;
  if (!isJsonObject(doc)) {
    throw new ReleaseError("malformed_manifest", "the manifest must be a JSON object");
  }
  const unknown = Object.keys(doc).filter((key) => !MANIFEST_KEYS.has(key));
  if (unknown.length > 0) {
    throw new ReleaseError(
      "malformed_manifest",
      `the manifest has unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; allowed: product, version, sequence, expires, artifacts, health, supervisor`,
    );
  }
  const { product, version, sequence, expires, artifacts, health, supervisor } = doc;
  if (product !== RELEASE_PRODUCT) {
    throw new ReleaseError(
      "wrong_product",
      `the manifest's product must be "agent", found ${describe(product)}`,
    );
  }
  if (typeof version !== "string" || !isSemver(version)) {
    throw new ReleaseError(
      "bad_version",
      `the manifest's version must be SemVer 2.0.0 (e.g. "1.4.0"), found ${describe(version)}`,
    );
  }
  if (typeof sequence !== "number" || !Number.isSafeInteger(sequence) || sequence < 1) {
    throw new ReleaseError(
      "bad_sequence",
      `the manifest's sequence must be a positive safe integer, found ${describe(sequence)}`,
    );
  }
  if (typeof expires !== "string" || parseRfc3339(expires) === undefined) {
    throw new ReleaseError(
      "bad_expires",
      `the manifest's expires must be an RFC 3339 date-time (e.g. "2030-01-31T00:00:00Z"), found ${describe(expires)}`,
    );
  }
  const parsedArtifacts = parseArtifacts(artifacts);
  if (supervisor !== undefined && typeof supervisor !== "boolean") {
    throw new ReleaseError(
      "malformed_manifest",
      `the manifest's supervisor must be true or false, found ${describe(supervisor)}`,
    );
  }
  return {
    product,
    version,
    sequence,
    expires,
    artifacts: parsedArtifacts,
    ...(health === undefined ? {} : { health: parseHealth(health) }),
    ...(supervisor === true ? { supervisor } : {}),
  };
}

function parseArtifacts(value: unknown): Record<string, ManifestArtifact> {
  if (!isJsonObject(value)) {
    throw new ReleaseError(
      "malformed_manifest",
      `the manifest's artifacts must be an object keyed by platform, found ${describe(value)}`,
    );
  }
  const platforms = Object.keys(value);
  if (platforms.length === 0) {
    throw new ReleaseError("bad_artifact", "the manifest must have at least one artifact");
  }
  const result: Record<string, ManifestArtifact> = {};
  for (const platform of platforms) {
    if (!isKnownPlatform(platform)) {
      throw new ReleaseError(
        "unknown_platform",
        `the manifest names unknown platform ${JSON.stringify(platform)}; known: ${KNOWN_PLATFORMS.join(", ")}`,
      );
    }
    result[platform] = parseArtifact(platform, value[platform]);
  }
  return result;
}

function parseArtifact(platform: string, value: unknown): ManifestArtifact {
  const where = `the ${platform} artifact`;
  if (!isJsonObject(value)) {
    throw new ReleaseError("bad_artifact", `${where} must be an object, found ${describe(value)}`);
  }
  const unknown = Object.keys(value).filter((key) => !ARTIFACT_KEYS.has(key));
  if (unknown.length > 0) {
    throw new ReleaseError(
      "bad_artifact",
      `${where} has unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}; allowed: sha256, size, url, file`,
    );
  }
  const { sha256, size, url, file } = value;
  if (typeof sha256 !== "string" || !SHA256_HEX.test(sha256)) {
    throw new ReleaseError(
      "bad_artifact",
      `${where}'s sha256 must be 64 lower-case hex characters, found ${describe(sha256)}`,
    );
  }
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 1) {
    throw new ReleaseError(
      "bad_artifact",
      `${where}'s size must be a positive safe integer, found ${describe(size)}`,
    );
  }
  if ((url === undefined) === (file === undefined)) {
    throw new ReleaseError(
      "bad_artifact",
      `${where} must have exactly one of url or file, found ${url === undefined ? "neither" : "both"}`,
    );
  }
  if (url !== undefined) {
    const problem = urlProblem(url);
    if (problem !== undefined) throw new ReleaseError("bad_artifact", `${where}'s url ${problem}`);
    return { sha256, size, url: url as string };
  }
  const problem = fileProblem(file);
  if (problem !== undefined) throw new ReleaseError("bad_artifact", `${where}'s file ${problem}`);
  return { sha256, size, file: file as string };
}

function urlProblem(url: unknown): string | undefined {
  if (typeof url !== "string") return `must be a string, found ${describe(url)}`;
  if (url.length > MAX_URL_LENGTH) return `is longer than ${MAX_URL_LENGTH} characters`;
  if (!/^[!-~]+$/.test(url) || !URL.canParse(url)) {
    return `must be an absolute URL of printable ASCII, found ${JSON.stringify(url)}`;
  }
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return `must use https: or http:, found ${JSON.stringify(parsed.protocol)}`;
  }
  if (parsed.username !== "" || parsed.password !== "") return "must not carry credentials";
  return undefined;
}

function fileProblem(file: unknown): string | undefined {
  if (typeof file !== "string") return `must be a string, found ${describe(file)}`;
  const segments = file.split("/");
  if (
    file.length > MAX_FILE_LENGTH ||
    !FILE_PATH.test(file) ||
    segments.some((s) => s === "." || s === "..")
  ) {
    return `must be a relative path of [A-Za-z0-9._+-] segments joined by "/", without "." or ".." segments and at most ${MAX_FILE_LENGTH} characters, found ${JSON.stringify(file)}`;
  }
  return undefined;
}

/** Input to {@link buildManifest}; `product` is always `"agent"`. */
export interface ManifestInput {
  version: string;
  sequence: number;
  expires: Date;
  artifacts: Record<string, ManifestArtifact>;
  /** Health checks (see {@link ReleaseHealth}); omitted from the bytes when absent. */
  health?: ReleaseHealth;
  /** The release carries its supervisor ({@link ReleaseManifest.supervisor}); omitted unless true. */
  supervisor?: boolean;
}

/**
 * Builds the canonical manifest bytes for a release: UTF-8 JSON with keys sorted at every
 * level, 2-space indentation and a trailing newline; `expires` formatted by
 * {@link formatRfc3339} (UTC, `Z`). The result is guaranteed to pass {@link parseManifest};
 * otherwise throws the {@link ReleaseError} it would raise (`bad_expires` for an invalid
 * `Date`). The same input always gives the same bytes.
 */
export function buildManifest(input: ManifestInput): Uint8Array {
  let expires: string;
  try {
    expires = formatRfc3339(input.expires);
  } catch {
    throw new ReleaseError(
      "bad_expires",
      "expires must be a valid Date between years 0000 and 9999",
    );
  }
  const doc = {
    product: RELEASE_PRODUCT,
    version: input.version,
    sequence: input.sequence,
    expires,
    artifacts: input.artifacts,
    ...(input.health === undefined ? {} : { health: input.health }),
    ...(input.supervisor === true ? { supervisor: true } : {}),
  };
  const bytes = new TextEncoder().encode(canonicalJson(doc));
  parseManifest(bytes);
  return bytes;
}

function describe(value: unknown): string {
  if (value === undefined) return "none";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
