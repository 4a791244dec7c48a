/**
 * The certificates `agentctl tls init` and `agentctl tls issue-node` write are constrained
 * as a fleet PKI must be: the CA signs leaves only (`basicConstraints CA:TRUE, pathlen:0`),
 * and every leaf says it is no CA (`CA:FALSE`, critical) and signs only TLS handshakes
 * (`keyUsage digitalSignature`). Without them a leaf's key (a node's, on every node) could
 * sign certificates that a verifier not checking the purpose accepts under the fleet CA.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";

const run = promisify(execFile);

/** The text of `openssl x509 -text` for the extensions of `file`. */
async function extensions(file: string): Promise<string> {
  const { stdout } = await run("openssl", [
    "x509",
    "-in",
    file,
    "-noout",
    "-ext",
    "basicConstraints,keyUsage",
  ]);
  return stdout;
}

describe("agentctl tls certificate constraints", { timeout: 60_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agentctl-tls-constraints-"));
    const init = await agentctl(["tls", "init", "--out", dir, "--host", "127.0.0.1"]);
    expect(init.code, init.stderr).toBe(0);
    const issued = await agentctl(["tls", "issue-node", "node-9", "--out", dir]);
    expect(issued.code, issued.stderr).toBe(0);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("limits the fleet CA to signing leaves (pathlen:0)", async () => {
    const text = await extensions(join(dir, "ca.pem"));
    expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
  });

  it.each(["server.pem", "node-9.pem"])("marks %s as no CA, for signatures only", async (name) => {
    const text = await extensions(join(dir, name));
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature\n/);
  });

  it("a leaf cannot act as a CA: a certificate it signs does not verify", async () => {
    // A node's key signing a certificate for another node, as an attacker holding it would.
    const forgedKey = join(dir, "forged.key");
    await run("openssl", [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
      ...["-keyout", forgedKey, "-subj", "/CN=forged", "-out", join(dir, "forged-self.pem")],
    ]);
    await run("openssl", [
      ...["req", "-new", "-key", forgedKey, "-subj", "/CN=forged", "-out", join(dir, "f.csr")],
    ]);
    await run("openssl", [
      ...["x509", "-req", "-in", join(dir, "f.csr"), "-CA", join(dir, "node-9.pem")],
      ...["-CAkey", join(dir, "node-9.key"), "-CAcreateserial", "-days", "1"],
      ...["-CAserial", join(dir, "f.srl"), "-out", join(dir, "forged.pem")],
    ]);
    const verified = await run("openssl", [
      ...["verify", "-CAfile", join(dir, "ca.pem"), "-untrusted", join(dir, "node-9.pem")],
      join(dir, "forged.pem"),
    ]).then(
      () => "verified",
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    expect(verified).toMatch(/invalid CA certificate|path length constraint exceeded/);
  });
});
