/**
 * TLS and mTLS of the agent stream, for the real Agent and the simulator alike: a CA that
 * signs Control's certificate (absent: the system's CAs) and, for mTLS, a client
 * certificate and key (Control then takes the node id from the certificate).
 */
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";

/** PEM contents of the stream's TLS. */
export interface StreamTls {
  readonly ca?: Uint8Array;
  readonly cert?: Uint8Array;
  readonly key?: Uint8Array;
}

/** PEM file paths, as flags name them. */
export interface StreamTlsFiles {
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

/**
 * Reads the files named by `--ca`, `--cert` and `--key`: undefined when none is given
 * (clear text). Throws one line naming the flag when a file cannot be read or when only
 * one of the certificate and its key is given.
 */
export function readStreamTls(files: StreamTlsFiles): StreamTls | undefined {
  if ((files.cert === undefined) !== (files.key === undefined)) {
    throw new Error("--cert and --key go together (the client certificate and its key)");
  }
  const read = (flag: string, file: string | undefined) => {
    if (file === undefined) return {};
    try {
      return { [flag]: readFileSync(file) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "error";
      throw new Error(`--${flag} ${JSON.stringify(file)} cannot be read (${code})`);
    }
  };
  const tls: StreamTls = {
    ...read("ca", files.ca),
    ...read("cert", files.cert),
    ...read("key", files.key),
  };
  return Object.keys(tls).length === 0 ? undefined : tls;
}

/** The channel credentials for `tls` (clear text when undefined). */
export function streamCredentials(tls: StreamTls | undefined): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  const buffer = (bytes: Uint8Array | undefined) =>
    bytes === undefined ? null : Buffer.from(bytes);
  return grpc.credentials.createSsl(buffer(tls.ca), buffer(tls.key), buffer(tls.cert));
}
