/**
 * The node a client certificate names. Decision (docs/decisions.md): a SAN URI
 * `agentcontrol://node/<id>` wins; without one, a SAN DNS name `<id>.<dnsSuffix>` when a
 * suffix is configured; the subject CN only when configured (a shared CA often signs
 * certificates for other purposes whose CN could name any node). Either way the id must be
 * a valid node id (the same rule as Hello's `node_id`).
 */
import type { PeerCertificate } from "node:tls";
import { isNodeId } from "../shared/node-id.js";

/** The URI scheme and authority of a node identity in a certificate's subjectAltName. */
export const NODE_URI_PREFIX = "agentcontrol://node/";

/** What a verified client certificate says about the node: its id, or why it names none. */
export type CertificateNode =
  | { readonly ok: true; readonly nodeId: string; readonly from: "uri" | "dns" | "cn" }
  | { readonly ok: false; readonly problem: string };

/** Which certificate forms name a node besides the SAN URI (`enrollment.certificateIdentity`). */
export interface CertificateIdentity {
  /** A SAN DNS name `<id>.<dnsSuffix>` names node `<id>`; undefined: DNS names name none. */
  readonly dnsSuffix?: string | undefined;
  /** The subject CN names the node when no SAN does (default false). */
  readonly commonName?: boolean;
}

/** Reads the node id out of a verified peer certificate. */
export function nodeOfCertificate(
  cert: PeerCertificate,
  identity: CertificateIdentity = {},
): CertificateNode {
  const uris = subjectAltNames(cert.subjectaltname ?? "")
    .filter((entry) => entry.type === "URI" && entry.value.startsWith(NODE_URI_PREFIX))
    .map((entry) => decodeURIComponentSafe(entry.value.slice(NODE_URI_PREFIX.length)));
  if (uris.length > 1) {
    return { ok: false, problem: "client certificate names more than one node URI" };
  }
  const fromUri = uris[0];
  if (fromUri !== undefined) {
    return isNodeId(fromUri)
      ? { ok: true, nodeId: fromUri, from: "uri" }
      : { ok: false, problem: `client certificate node URI "${clip(fromUri)}" is not a node id` };
  }
  const suffix = identity.dnsSuffix;
  if (suffix) {
    const names = subjectAltNames(cert.subjectaltname ?? "")
      .filter((e) => e.type === "DNS" && e.value.toLowerCase().endsWith(`.${suffix.toLowerCase()}`))
      .map((e) => e.value.slice(0, e.value.length - suffix.length - 1));
    if (names.length > 1) {
      return { ok: false, problem: `client certificate names more than one node under .${suffix}` };
    }
    const fromDns = names[0];
    if (fromDns !== undefined) {
      return isNodeId(fromDns)
        ? { ok: true, nodeId: fromDns, from: "dns" }
        : { ok: false, problem: `client certificate DNS name "${clip(fromDns)}" is not a node id` };
    }
  }
  const forms = `a SAN URI ${NODE_URI_PREFIX}<id>${suffix ? ` or a SAN DNS name <id>.${suffix}` : ""}`;
  if (!identity.commonName) {
    return { ok: false, problem: `client certificate names no node: it needs ${forms}` };
  }
  const cn = commonName(cert);
  if (cn === undefined) {
    return { ok: false, problem: `client certificate has neither ${forms} nor a CN` };
  }
  return isNodeId(cn)
    ? { ok: true, nodeId: cn, from: "cn" }
    : { ok: false, problem: `client certificate CN "${clip(cn)}" is not a node id` };
}

/** One `TYPE:value` entry of Node's subjectaltname text (values may be JSON-quoted). */
interface AltName {
  readonly type: string;
  readonly value: string;
}

/** Parses Node's `subjectaltname` text, e.g. `DNS:a, URI:"x,y"`. */
export function subjectAltNames(text: string): AltName[] {
  const out: AltName[] = [];
  const pattern = /(?:^|, )([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)/gy;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const raw = match[2] ?? "";
    let value = raw;
    if (raw.startsWith('"')) {
      try {
        value = JSON.parse(raw) as string;
      } catch {
        continue;
      }
    }
    out.push({ type: match[1] ?? "", value });
    if (pattern.lastIndex >= text.length) break;
  }
  return out;
}

function commonName(cert: PeerCertificate): string | undefined {
  const cn: unknown = cert.subject?.CN;
  if (typeof cn === "string") return cn;
  if (Array.isArray(cn)) return undefined; // several CNs: ambiguous, names no node
  return undefined;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
