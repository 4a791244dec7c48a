/**
 * The node a client certificate names. Decision (docs/decisions.md): a SAN URI
 * `agentcontrol://node/<id>` wins; without one, the subject CN is the node id. Either way
 * the id must be a valid node id (the same rule as Hello's `node_id`).
 */
import type { PeerCertificate } from "node:tls";
import { isNodeId } from "../shared/node-id.js";

/** The URI scheme and authority of a node identity in a certificate's subjectAltName. */
export const NODE_URI_PREFIX = "agentcontrol://node/";

/** What a verified client certificate says about the node: its id, or why it names none. */
export type CertificateNode =
  | { readonly ok: true; readonly nodeId: string; readonly from: "uri" | "cn" }
  | { readonly ok: false; readonly problem: string };

/** Reads the node id out of a verified peer certificate. */
export function nodeOfCertificate(cert: PeerCertificate): CertificateNode {
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
  const cn = commonName(cert);
  if (cn === undefined) {
    return { ok: false, problem: `client certificate has no ${NODE_URI_PREFIX}<id> URI and no CN` };
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
