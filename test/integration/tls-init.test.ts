/**
 * `agentctl tls init` and `agentctl tls issue-node` make a working fleet PKI: a Control
 * serving the agent stream with the server certificate and the fleet CA as client CA
 * welcomes an Agent presenting the issued certificate, under the node id it names.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

describe("agentctl tls init and issue-node", { timeout: 120_000 }, () => {
  let dir: string;
  let tc: TestControl | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentctl-tls-"));
  });
  afterAll(async () => {
    await tc?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("creates a CA and certificates that Control and an Agent use for mTLS", async () => {
    const init = await agentctl(["tls", "init", "--out", dir, "--host", "127.0.0.1"]);
    expect(init.stderr).toBe("");
    expect(init.code).toBe(0);
    const issued = await agentctl(["tls", "issue-node", "pki-node-7", "--out", dir]);
    expect(issued.code).toBe(0);
    expect(issued.stdout).toMatch(/pki-node-7/);
    expect((await stat(join(dir, "ca.key"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "pki-node-7.key"))).mode & 0o777).toBe(0o600);
    const again = await agentctl(["tls", "init", "--out", dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not overwriting a fleet CA/);

    tc = await startTestControl({
      config: {
        tls: {
          agent: {
            cert: join(dir, "server.pem"),
            key: join(dir, "server.key"),
            clientCa: join(dir, "ca.pem"),
          },
        },
      },
    });
    const credentials = grpc.credentials.createSsl(
      await readFile(join(dir, "ca.pem")),
      await readFile(join(dir, "pki-node-7.key")),
      await readFile(join(dir, "pki-node-7.pem")),
    );
    const { stream, welcome } = await connectAgent(
      tc.agentAddress,
      undefined,
      "pki-node-7",
      {},
      { credentials },
    );
    expect(welcome.body.case === "welcome" && welcome.body.value.nodeId).toBe("pki-node-7");
    stream.close();
    await stream.ended;
  });
});
