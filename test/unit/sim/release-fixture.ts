/**
 * Real signed releases for the simulator tests: ed25519 keys, manifests and envelopes
 * from the shared release module, artifacts served over a local HTTP server, and
 * Operation messages built from them.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  type ReleaseKeyPair,
  sha256Hex,
  signEnvelope,
} from "../../../control/shared/release/index.js";
import {
  type Operation,
  OperationSchema,
  type SignedEnvelope,
  SignedEnvelopeSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

/** How the HTTP server answers one path. */
export type Route =
  | { kind: "bytes"; body: Uint8Array }
  | { kind: "chunked"; body: Uint8Array }
  | { kind: "stall"; first: Uint8Array }
  | { kind: "trickle"; body: Uint8Array; chunk: number; everyMs: number }
  | { kind: "status"; code: number };

/** A local artifact server; counts requests per path. */
export class ArtifactServer {
  readonly routes = new Map<string, Route>();
  readonly hits = new Map<string, number>();
  #server: Server | undefined;
  base = "";

  async start(): Promise<this> {
    this.#server = createServer((req, res) => {
      const path = req.url ?? "/";
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const route = this.routes.get(path);
      if (route === undefined) {
        res.writeHead(404).end();
        return;
      }
      switch (route.kind) {
        case "bytes":
          res.writeHead(200, { "content-length": route.body.byteLength }).end(route.body);
          return;
        case "chunked":
          res.writeHead(200);
          res.write(route.body.subarray(0, 10));
          setTimeout(() => res.end(route.body.subarray(10)), 20);
          return;
        case "stall":
          res.writeHead(200);
          res.write(route.first);
          return; // never ends
        case "status":
          res.writeHead(route.code).end();
          return;
        case "trickle": {
          res.writeHead(200, { "content-length": route.body.byteLength });
          let sent = 0;
          const next = () => {
            if (res.destroyed) return;
            res.write(route.body.subarray(sent, sent + route.chunk));
            sent += route.chunk;
            if (sent >= route.body.byteLength) res.end();
            else setTimeout(next, route.everyMs);
          };
          next();
          return;
        }
      }
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}

/** One signed release with one artifact per listed platform. */
export interface TestRelease {
  version: string;
  sequence: number;
  envelope: SignedEnvelope;
  artifacts: Record<string, { url: string; sha256: string; size: number; bytes: Uint8Array }>;
}

/** Makes a signed release; every platform's artifact is served at `/<version>/<platform>`. */
export async function makeRelease(
  server: ArtifactServer,
  key: ReleaseKeyPair,
  version: string,
  sequence: number,
  platforms: readonly string[] = ["linux-amd64"],
): Promise<TestRelease> {
  const artifacts: TestRelease["artifacts"] = {};
  for (const platform of platforms) {
    const bytes = new Uint8Array(randomBytes(2048));
    const path = `/${version}/${platform}`;
    server.routes.set(path, { kind: "bytes", body: bytes });
    artifacts[platform] = {
      url: server.base + path,
      sha256: sha256Hex(bytes),
      size: bytes.byteLength,
      bytes,
    };
  }
  const manifest = buildManifest({
    version,
    sequence,
    expires: new Date(Date.now() + 3_600_000),
    artifacts: Object.fromEntries(
      Object.entries(artifacts).map(([p, a]) => [
        p,
        { url: a.url, sha256: a.sha256, size: a.size },
      ]),
    ),
  });
  const signed = await signEnvelope(createEnvelope(manifest), key.privateKey);
  return { version, sequence, envelope: create(SignedEnvelopeSchema, signed), artifacts };
}

/** A fresh signing key. */
export function newKey(): Promise<ReleaseKeyPair> {
  return generateKeyPair();
}

/** An agent_upgrade Operation for `release`'s `platform` artifact, with optional overrides. */
export function upgradeOp(
  id: string,
  release: TestRelease,
  platform = "linux-amd64",
  override: {
    version?: string;
    sequence?: number;
    artifact?: Partial<{ platform: string; url: string; sha256: string; size: number }>;
  } = {},
): Operation {
  const artifact = release.artifacts[platform] ?? Object.values(release.artifacts)[0]!;
  return create(OperationSchema, {
    id,
    kind: {
      case: "agentUpgrade",
      value: {
        version: override.version ?? release.version,
        sequence: BigInt(override.sequence ?? release.sequence),
        artifact: {
          platform: override.artifact?.platform ?? platform,
          url: override.artifact?.url ?? artifact.url,
          sha256: override.artifact?.sha256 ?? artifact.sha256,
          size: BigInt(override.artifact?.size ?? artifact.size),
        },
        envelope: release.envelope,
      },
    },
  });
}

/** An agent_rollback Operation. */
export function rollbackOp(id: string, version: string): Operation {
  return create(OperationSchema, {
    id,
    kind: { case: "agentRollback", value: { version, reason: "test" } },
  });
}

/** An agent_confirm Operation. */
export function confirmOp(id: string, version: string, sequence: number): Operation {
  return create(OperationSchema, {
    id,
    kind: { case: "agentConfirm", value: { version, sequence: BigInt(sequence) } },
  });
}
