/**
 * A host and port to listen on, as configuration writes it (`HOST:PORT`, IPv6 hosts in
 * brackets) and as the agent and admin servers bind it.
 */

/** A host and port to listen on. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** Parses `HOST:PORT` (IPv6 hosts in brackets); undefined when malformed. */
export function parseAddress(text: string): ListenAddress | undefined {
  const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(text.trim());
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > 65535) return undefined;
  return { host: (match[1] ?? "").replace(/^\[|\]$/g, ""), port };
}

/** Formats an address for grpc-js / URLs (IPv6 in brackets). */
export function formatAddress(address: ListenAddress): string {
  return address.host.includes(":")
    ? `[${address.host}]:${address.port}`
    : `${address.host}:${address.port}`;
}
