/**
 * `release register` bounds each silence of its upload by agentctl's timeout, not the whole
 * call: an upload slower than the timeout that keeps moving succeeds; a server that takes no
 * bytes, or answers nothing after the last, is left after the timeout with one line saying
 * which. Against a raw HTTP server speaking Connect's unary protocol, reading at its own pace
 * (and holding no release, as GetRelease, asked first, says).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  serializeEnvelope,
  sha256Hex,
  signEnvelope,
} from "../../../control/shared/release/index.js";
import { RegisterReleaseResponseSchema } from "../../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { runCli } from "./run-cli.js";

const MIB = 1024 * 1024;
const SIZE = 24 * MIB;

type Pace = "slow" | "never_reads" | "never_answers";

function answer(res: ServerResponse): void {
  const body = toBinary(
    RegisterReleaseResponseSchema,
    create(RegisterReleaseResponseSchema, {
      created: true,
      release: { version: "5.0.0", sequence: 50n, signerKeyIds: ["k1"] },
    }),
  );
  res.writeHead(200, { "content-type": "application/proto" });
  res.end(Buffer.from(body));
}

/** Reads the body 1 MiB per 150 ms ("slow"), never, or whole without answering. */
function serve(pace: () => Pace, received: number[]): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.endsWith("/GetRelease")) {
      // agentctl asks first whether Control holds the release: it does not.
      req.resume();
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "not_found", message: 'no release with version "5.0.0"' }));
      return;
    }
    const mode = pace();
    if (mode === "never_reads") {
      req.pause();
      return;
    }
    let total = 0;
    let burst = 0;
    req.on("data", (chunk: Buffer) => {
      total += chunk.length;
      burst += chunk.length;
      if (mode === "slow" && burst >= MIB) {
        burst = 0;
        req.pause();
        setTimeout(() => req.resume(), 150);
      }
    });
    req.on("end", () => {
      received.push(total);
      if (mode === "slow") answer(res);
    });
  });
}

describe("release register's timeout bounds each silence of the upload", {
  timeout: 60_000,
}, () => {
  let dir: string;
  let envelopePath: string;
  let server: Server;
  let url: string;
  let pace: Pace = "slow";
  const received: number[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentctl-upload-"));
    const key = await generateKeyPair();
    const bytes = Buffer.alloc(SIZE, 7);
    await writeFile(join(dir, "agent-amd64"), bytes);
    const manifest = buildManifest({
      version: "5.0.0",
      sequence: 50,
      expires: new Date(Date.now() + 3_600_000),
      artifacts: { "linux-amd64": { sha256: sha256Hex(bytes), size: SIZE, file: "agent-amd64" } },
    });
    envelopePath = join(dir, "release.json");
    await writeFile(
      envelopePath,
      serializeEnvelope(await signEnvelope(createEnvelope(manifest), key.privateKey)),
    );
    server = serve(() => pace, received);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const register = () =>
    runCli(["release", "register", envelopePath, "--timeout", "2s"], {
      env: { AGENTCTL_SERVER: url, AGENTCTL_TOKEN: "operator-token" },
    });

  it("finishes an upload that takes longer than the timeout while it keeps moving", async () => {
    pace = "slow";
    const started = Date.now();
    const result = await register();
    expect(result.stderr).toMatch(/uploading 1 artifact file: 24\.0 MiB sent in /);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toBe("registered release 5.0.0 (sequence 50), signed by k1\n");
    expect(received.at(-1)).toBeGreaterThan(SIZE);
    // 24 pauses of 150 ms: past the 2 s timeout in all.
    expect(Date.now() - started).toBeGreaterThan(3_000);
  });

  it("gives up when Control takes no bytes for the timeout, saying so", async () => {
    pace = "never_reads";
    const result = await register();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Control took no bytes of the upload for 2s \(raise --timeout/);
  });

  it("gives up when no answer comes for the timeout after the last byte, saying so", async () => {
    pace = "never_answers";
    const result = await register();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/no answer within 2s after the upload \(raise --timeout/);
  });
});
