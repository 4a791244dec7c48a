/**
 * Forges what a hostile Control sends a real Agent: upgrade operations over releases signed,
 * listed in the TUF repository and served exactly as a test says (or not), and confirms of
 * any version and sequence. Each operation gets a fresh id.
 */
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  buildManifest,
  createEnvelope,
  type Envelope,
  type ReleaseKeyPair,
  sha256Hex,
  signEnvelope,
} from "../../control/shared/release/index.js";
import {
  type Operation,
  OperationSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import type { TestTufRepo } from "../helpers/tuf-repo.js";
import type { HostileArtifacts } from "./hostile-control.js";

/** The platform the forged releases are built for unless a test names another. */
export const FORGED_PLATFORM = "linux-amd64";

/** A release as a test wants it forged. */
export interface Forged {
  version: string;
  sequence: number;
  bytes?: Uint8Array;
  platform?: string;
  expires?: Date;
  signers?: ReleaseKeyPair[];
  /** Serve other bytes than the signed ones. */
  served?: Uint8Array;
  /** Artifact URL base (default the configured download origin). */
  base?: string;
  /** List the release in TUF (default true), optionally with another sha256. */
  listed?: boolean | { sha256: string };
  tamper?: (envelope: Envelope) => Envelope;
}

/** What forging needs: the artifact servers, the TUF repository and the release keys. */
export interface ForgeDeps {
  /** The download origin the Agent is configured with. */
  readonly artifacts: HostileArtifacts;
  /** Another origin, serving the same paths. */
  readonly elsewhere: HostileArtifacts;
  readonly repo: TestTufRepo;
  readonly keys: readonly ReleaseKeyPair[];
}

/** Builds forged operations with ids unique to this forger. */
export class Forger {
  private count = 0;

  constructor(private readonly d: ForgeDeps) {}

  /** Signs, lists and serves a release as told, and builds its upgrade operation. */
  async upgrade(f: Forged): Promise<Operation> {
    const bytes = f.bytes ?? new Uint8Array(randomBytes(4096));
    const platform = f.platform ?? FORGED_PLATFORM;
    const path = `/a/${f.version}/${platform}/${this.count}`;
    const url = `${f.base ?? this.d.artifacts.base}${path}`;
    const served = f.served ?? bytes;
    for (const server of [this.d.artifacts, this.d.elsewhere]) {
      server.routes.set(path, { kind: "bytes", body: served });
    }
    const sha256 = sha256Hex(bytes);
    const manifest = buildManifest({
      version: f.version,
      sequence: f.sequence,
      expires: f.expires ?? new Date(Date.now() + 3_600_000),
      artifacts: { [platform]: { url, sha256, size: bytes.byteLength } },
    });
    let envelope = createEnvelope(manifest);
    for (const key of f.signers ?? this.d.keys)
      envelope = await signEnvelope(envelope, key.privateKey);
    if (f.tamper) envelope = f.tamper(envelope);
    const listed = f.listed ?? true;
    if (listed !== false) {
      await this.d.repo.publishTargets(
        [
          {
            version: f.version,
            sequence: f.sequence,
            platform,
            length: bytes.byteLength,
            sha256: listed === true ? sha256 : listed.sha256,
          },
        ],
        this.d.repo.keys.targets,
      );
    }
    return create(OperationSchema, {
      id: `op-${++this.count}`,
      kind: {
        case: "agentUpgrade",
        value: {
          version: f.version,
          sequence: BigInt(f.sequence),
          artifact: { platform, url, sha256, size: BigInt(bytes.byteLength) },
          envelope: {
            payloadType: envelope.payloadType,
            payload: envelope.payload,
            signatures: envelope.signatures.map((s) => ({ keyid: s.keyid, sig: s.sig })),
          },
        },
      },
    });
  }

  /** A confirm of `version` at `sequence`, whatever the Agent installed. */
  confirm(version: string, sequence: bigint): Operation {
    return create(OperationSchema, {
      id: `op-${++this.count}`,
      kind: { case: "agentConfirm", value: { version, sequence } },
    });
  }
}
