/**
 * `--ca-file` / `AGENTCTL_CA_FILE`: the CA certificates agentctl trusts for an `https://`
 * admin API besides the system's, for a Control whose certificate a private CA signed.
 */

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { UsageError } from "./args.js";

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * The PEM bytes of `path`, checked to hold at least one certificate and only certificates
 * that parse; otherwise a {@link UsageError} naming `source` (the flag or variable) and the path.
 */
export function readCaFile(path: string, source: string): Buffer {
  if (path === "") throw new UsageError(`${source} must name a file`);
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UsageError(`${source} ${path}: cannot read it (${code})`);
  }
  const blocks = pem.toString("utf8").match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    throw new UsageError(
      `${source} ${path}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  }
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch {
      throw new UsageError(
        `${source} ${path}: certificate ${index + 1} is not a valid certificate`,
      );
    }
  });
  return pem;
}
