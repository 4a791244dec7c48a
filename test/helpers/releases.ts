/**
 * Builds real signed releases for tests: fresh ed25519 keys, a manifest over artifact
 * bytes, and an envelope signed by the chosen keys. `rawManifest` lets a test sign a
 * manifest that the builder would refuse (wrong product, past expiry).
 */
import * as ed from "@noble/ed25519";
import {
  buildManifest,
  createEnvelope,
  type Envelope,
  generateKeyPair,
  keyIdOf,
  preAuthEncoding,
  RELEASE_PAYLOAD_TYPE,
  type ReleaseHealth,
  type ReleaseKeyPair,
  serializeEnvelope,
  sha256Hex,
} from "../../control/shared/release/index.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import type { TestControl } from "./control.js";

/** A signed release ready to register. */
export interface TestRelease {
  readonly version: string;
  readonly sequence: number;
  /** The envelope file bytes. */
  readonly envelope: Uint8Array;
  /** Artifact bytes by platform (for upload). */
  readonly files: Map<string, Uint8Array>;
}

/** Makes `count` key pairs. */
export async function makeKeys(count: number): Promise<ReleaseKeyPair[]> {
  return await Promise.all(Array.from({ length: count }, () => generateKeyPair()));
}

/** Options of {@link makeRelease}. */
export interface MakeReleaseOptions {
  readonly version: string;
  readonly sequence: number;
  readonly keys: readonly ReleaseKeyPair[];
  readonly platforms?: readonly string[];
  readonly expires?: Date;
  /** Overrides of the manifest JSON, signed as is (bypasses the builder's checks). */
  readonly rawManifest?: (manifest: Record<string, unknown>) => Record<string, unknown>;
  /** Artifact content per platform (default: a few bytes naming version and platform). */
  readonly content?: (platform: string) => Uint8Array;
  /** Use artifact urls under this base instead of files served by Control. */
  readonly urlBase?: string;
  /** The manifest's signed health checks. */
  readonly health?: ReleaseHealth;
}

/** Builds and signs a release. */
export async function makeRelease(options: MakeReleaseOptions): Promise<TestRelease> {
  const platforms = options.platforms ?? ["linux-amd64", "linux-arm64"];
  const files = new Map<string, Uint8Array>();
  const artifacts: Record<string, { sha256: string; size: number; file?: string; url?: string }> =
    {};
  for (const platform of platforms) {
    const content =
      options.content?.(platform) ??
      new TextEncoder().encode(`agent ${options.version} for ${platform}\n`);
    files.set(platform, content);
    artifacts[platform] = {
      sha256: sha256Hex(content),
      size: content.byteLength,
      ...(options.urlBase
        ? { url: `${options.urlBase}/${options.version}/${platform}` }
        : { file: `agent-${platform}` }),
    };
  }
  const expires = options.expires ?? new Date(Date.now() + 7 * 24 * 3600 * 1000);
  let payload: Uint8Array;
  if (options.rawManifest) {
    const manifest = options.rawManifest({
      product: "agent",
      version: options.version,
      sequence: options.sequence,
      expires: expires.toISOString().replace(/\.\d{3}Z$/, "Z"),
      artifacts,
    });
    payload = new TextEncoder().encode(JSON.stringify(manifest));
  } else {
    payload = buildManifest({
      version: options.version,
      sequence: options.sequence,
      expires,
      artifacts,
      ...(options.health === undefined ? {} : { health: options.health }),
    });
  }
  let envelope: Envelope = createEnvelope(payload);
  for (const key of options.keys) envelope = await signRaw(envelope, key);
  return {
    version: options.version,
    sequence: options.sequence,
    envelope: new TextEncoder().encode(serializeEnvelope(envelope)),
    files: options.urlBase ? new Map() : files,
  };
}

/** Adds a signature without the signer's validity checks (tests sign bad manifests too). */
export async function signRaw(envelope: Envelope, key: ReleaseKeyPair): Promise<Envelope> {
  const sig = await ed.signAsync(
    preAuthEncoding(RELEASE_PAYLOAD_TYPE, envelope.payload),
    key.privateKey,
  );
  return {
    ...envelope,
    signatures: [...envelope.signatures, { keyid: keyIdOf(key.publicKey), sig }],
  };
}

/**
 * Makes a release of `version` for linux-amd64 signed by `key` and registers it, with its
 * artifact, through `control`'s ReleaseService (as operator).
 */
export async function registerTestRelease(
  control: Pick<TestControl, "client">,
  options: { version: string; sequence: number; key: ReleaseKeyPair },
): Promise<TestRelease> {
  const release = await makeRelease({
    version: options.version,
    sequence: options.sequence,
    keys: [options.key],
    platforms: ["linux-amd64"],
  });
  await control.client(ReleaseService).registerRelease({
    envelope: release.envelope,
    artifacts: [...release.files].map(([platform, content]) => ({ platform, content })),
  });
  return release;
}
