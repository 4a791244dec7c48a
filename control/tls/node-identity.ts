/**
 * The node a client certificate names. Decision (docs/decisions.md): a SAN URI
 * `agentcontrol://node/<id>` wins; without one, a SAN DNS name `<id>.<dnsSuffix>` when a
 * suffix is configured; the subject CN only when configured (a shared CA often signs
 * certificates for other purposes whose CN could name any node). Either way the id must be
 * a valid node id (the same rule as Hello's `node_id`).
 */
import type { PeerCertificate } from "node:tls";
import { isLabelKey, LABEL_VALUE_LENGTH } from "../shared/label-key.js";
import { isNodeId } from "../shared/node-id.js";

/** The URI scheme and authority of a node identity in a certificate's subjectAltName. */
export const NODE_URI_PREFIX = "agentcontrol://node/";

/**
 * The URI prefix of a label a certificate assigns: `agentcontrol://label/<key>=<value>`, URI-
 * encoded, one SAN URI per label (`agentctl tls issue-node --label`). A SAN URI, not a private
 * X.509 extension: Node.js reads SANs of a peer certificate without an ASN.1 parser, and
 * `openssl x509 -text` shows them to an operator as they are.
 */
export const LABEL_URI_PREFIX = "agentcontrol://label/";

/** The most labels one certificate may assign (as a join token). */
export const MAX_CERTIFICATE_LABELS = 64;

/** The labels a certificate assigns, or why they cannot be trusted. */
export type CertificateLabels =
  | { readonly ok: true; readonly labels: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly problem: string };

/**
 * Reads the labels a verified client certificate assigns (see {@link LABEL_URI_PREFIX}):
 * each a valid label key with a value of at most 256 characters, no key twice, at most
 * {@link MAX_CERTIFICATE_LABELS}. Control trusts them as a join token's labels: the CA that
 * signed the certificate is the enrollment authority.
 */
export function certificateLabels(cert: PeerCertificate): CertificateLabels {
  const labels: Record<string, string> = {};
  const entries = subjectAltNames(cert.subjectaltname ?? "").filter(
    (e) => e.type === "URI" && e.value.startsWith(LABEL_URI_PREFIX),
  );
  if (entries.length > MAX_CERTIFICATE_LABELS) {
    return {
      ok: false,
      problem: `client certificate assigns more than ${MAX_CERTIFICATE_LABELS} labels`,
    };
  }
  for (const entry of entries) {
    const text = entry.value.slice(LABEL_URI_PREFIX.length);
    const eq = text.indexOf("=");
    if (eq <= 0) {
      return { ok: false, problem: `client certificate label "${clip(text)}" is not KEY=VALUE` };
    }
    const key = decodeURIComponentSafe(text.slice(0, eq));
    const value = decodeURIComponentSafe(text.slice(eq + 1));
    if (!isLabelKey(key)) {
      return {
        ok: false,
        problem: `client certificate label "${clip(key)}" is not a valid label key`,
      };
    }
    if (value.length > LABEL_VALUE_LENGTH) {
      return {
        ok: false,
        problem: `client certificate label "${key}" is longer than ${LABEL_VALUE_LENGTH} characters`,
      };
    }
    if (key in labels) {
      return { ok: false, problem: `client certificate assigns label "${key}" twice` };
    }
    labels[key] = value;
  }
  return { ok: true, labels };
}

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
