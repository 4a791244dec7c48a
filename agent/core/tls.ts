/**
 * TLS and mTLS of the agent stream, for the real Agent and the simulator alike: a CA that
 * signs Control's certificate (absent: the system's CAs) and, for mTLS, a client
 * certificate and key (Control then takes the node id from the certificate).
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { checkServerIdentity } from "node:tls";
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

/**
 * The TLS server name (SNI) sent when Control is dialled by IP address. grpc-js would send
 * the IP itself, which RFC 6066 forbids and Node.js warns about on stderr (DEP0123, "Setting
 * the TLS ServerName to an IP address"); a name under the reserved `.invalid` TLD names no
 * real host, and the certificate is still verified against the IP ({@link streamCredentials}).
 */
export const IP_SERVER_NAME = "ip-address.invalid";

/** The host of `server` (HOST:PORT, or [IPv6]:PORT), without brackets. */
function hostOf(server: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(server);
  if (bracketed !== null) return bracketed[1] ?? "";
  const colon = server.lastIndexOf(":");
  return colon < 0 ? server : server.slice(0, colon);
}

/**
 * The IP address `server` (HOST:PORT) names as its host, or undefined when it names a host
 * name (the usual TLS server name then).
 */
export function serverIp(server: string): string | undefined {
  const host = hostOf(server);
  return isIP(host) === 0 ? undefined : host;
}

/**
 * Channel options that keep an IP address out of the TLS server name when `server` is dialled
 * by IP ({@link IP_SERVER_NAME}); none for a host name.
 */
export function serverNameOptions(server: string): grpc.ChannelOptions {
  return serverIp(server) === undefined ? {} : { "grpc.ssl_target_name_override": IP_SERVER_NAME };
}

/**
 * The channel credentials for `tls` (clear text when undefined). With `server` dialled by IP
 * address, Control's certificate is verified against that IP (its IP subject alternative
 * names), whatever server name the connection sent ({@link serverNameOptions}).
 */
export function streamCredentials(
  tls: StreamTls | undefined,
  server?: string,
): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  const buffer = (bytes: Uint8Array | undefined) =>
    bytes === undefined ? null : Buffer.from(bytes);
  const ip = server === undefined ? undefined : serverIp(server);
  return grpc.credentials.createSsl(
    buffer(tls.ca),
    buffer(tls.key),
    buffer(tls.cert),
    ip === undefined ? {} : { checkServerIdentity: (_name, cert) => checkServerIdentity(ip, cert) },
  );
}
