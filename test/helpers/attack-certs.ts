/**
 * Client certificates made at test time with openssl, signed by the committed test CA
 * (test/fixtures/tls/ca.pem): a second certificate for a node that already has one, as
 * `agentctl tls issue-node ID` run again (a renewal) would give it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { tlsFile, tlsPath } from "../fixtures/tls/index.js";

/** A fresh key and certificate naming `nodeId` by SAN URI, signed by the test CA. */
export function issueNodeCertificate(nodeId: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "attack-cert-"));
  const key = join(dir, "node.key");
  const csr = join(dir, "node.csr");
  const ext = join(dir, "node.ext");
  const cert = join(dir, "node.pem");
  execFileSync("openssl", [
    "genpkey",
    "-algorithm",
    "EC",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-out",
    key,
  ]);
  execFileSync("openssl", ["req", "-new", "-key", key, "-subj", `/CN=${nodeId}`, "-out", csr]);
  writeFileSync(
    ext,
    `subjectAltName=URI:agentcontrol://node/${nodeId}\nextendedKeyUsage=clientAuth\n`,
  );
  execFileSync("openssl", [
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    tlsPath("ca"),
    "-CAkey",
    tlsPath("ca", "key"),
    "-CAcreateserial",
    "-CAserial",
    join(dir, "ca.srl"),
    "-days",
    "30",
    "-sha256",
    "-extfile",
    ext,
    "-out",
    cert,
  ]);
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

/** Channel credentials trusting the test CA and presenting `client`. */
export function credentialsOf(client: { key: Buffer; cert: Buffer }): {
  credentials: grpc.ChannelCredentials;
} {
  return { credentials: grpc.credentials.createSsl(tlsFile("ca"), client.key, client.cert) };
}
