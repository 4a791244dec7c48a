/**
 * `agentctl tls init|issue-node`: a fleet CA, Control's server certificate and node client
 * certificates, so a production install is TLS end to end in minutes. Node.js can read
 * X.509 (`node:crypto` X509Certificate) but not write it, so the certificates are made by
 * the `openssl` command (any OpenSSL 1.1.1 or newer, or LibreSSL 3.x), which must be on the
 * PATH; keys are P-256, files are written mode 0600 (keys) and 0644 (certificates).
 */
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { access, chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { isLabelKey, LABEL_VALUE_LENGTH } from "../../control/shared/label-key.js";
import { isNodeId } from "../../control/shared/node-id.js";
import {
  LABEL_URI_PREFIX,
  MAX_CERTIFICATE_LABELS,
  NODE_URI_PREFIX,
} from "../../control/tls/node-identity.js";
import {
  expectPositionals,
  listFlag,
  parseDuration,
  parseKeyValues,
  stringFlag,
  UsageError,
} from "../args.js";
import { type CommandGroup, ExitError } from "../command.js";

const run = promisify(execFile);
const DEFAULT_DAYS = 825;

async function openssl(args: readonly string[]): Promise<void> {
  try {
    await run("openssl", args, { timeout: 60_000 });
  } catch (error) {
    const e = error as { code?: string; stderr?: string; message: string };
    if (e.code === "ENOENT") {
      throw new ExitError(1, "agentctl tls needs the openssl command on the PATH (OpenSSL 1.1.1+)");
    }
    throw new ExitError(1, `openssl failed: ${(e.stderr ?? e.message).trim().split("\n")[0]}`);
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The SAN URIs of the labels a node certificate assigns (`agentcontrol://label/K=V`, each
 * part URI-encoded, so no comma of a value splits the openssl list).
 * @throws UsageError for a key Control would refuse, a value too long, too many labels.
 */
export function certificateLabelNames(labels: Readonly<Record<string, string>>): string[] {
  const entries = Object.entries(labels);
  if (entries.length > MAX_CERTIFICATE_LABELS) {
    throw new UsageError(`at most ${MAX_CERTIFICATE_LABELS} --label`);
  }
  return entries.map(([key, value]) => {
    if (!isLabelKey(key)) throw new UsageError(`--label: "${key}" is not a valid label key`);
    if (value.length > LABEL_VALUE_LENGTH) {
      throw new UsageError(`--label ${key}: longer than ${LABEL_VALUE_LENGTH} characters`);
    }
    return `URI:${LABEL_URI_PREFIX}${encodeURIComponent(key)}=${encodeURIComponent(value)}`;
  });
}

/** `subjectAltName` entries for hosts: IP addresses as IP, the rest as DNS names. */
export function altNames(hosts: readonly string[]): string {
  return hosts
    .map((h) => (/^[\d.]+$/.test(h) || h.includes(":") ? `IP:${h}` : `DNS:${h}`))
    .join(",");
}

/**
 * The extensions of every leaf: not a CA (a node's key cannot sign certificates a verifier
 * would chain to the fleet CA) and a key for signatures only.
 */
const LEAF_CONSTRAINTS = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature";

/** Signs a new P-256 leaf for `subject` with the CA in `caDir`, writing `<out>/<name>.{pem,key}`. */
async function issueLeaf(o: {
  caDir: string;
  out: string;
  name: string;
  subject: string;
  extensions: string;
  days: number;
}): Promise<string> {
  const tmp = await mkdtemp(join(tmpdir(), "agentctl-tls-"));
  try {
    const key = join(o.out, `${o.name}.key`);
    const cert = join(o.out, `${o.name}.pem`);
    await openssl([
      "genpkey",
      "-algorithm",
      "EC",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-out",
      key,
    ]);
    await chmod(key, 0o600);
    await openssl(["req", "-new", "-key", key, "-subj", o.subject, "-out", join(tmp, "leaf.csr")]);
    // Every leaf says it is no CA and signs only TLS handshakes, whatever else it carries.
    await writeFile(join(tmp, "leaf.ext"), `${LEAF_CONSTRAINTS}\n${o.extensions}\n`);
    await openssl([
      ...["x509", "-req", "-in", join(tmp, "leaf.csr"), "-CA", join(o.caDir, "ca.pem")],
      ...["-CAkey", join(o.caDir, "ca.key"), "-CAcreateserial", "-CAserial", join(tmp, "ca.srl")],
      ...["-days", String(o.days), "-sha256", "-extfile", join(tmp, "leaf.ext"), "-out", cert],
    ]);
    await chmod(cert, 0o644);
    return cert;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

function daysOf(values: Parameters<typeof stringFlag>[0]): number {
  const text = stringFlag(values, "valid");
  if (text === undefined) return DEFAULT_DAYS;
  const days = Math.ceil(parseDuration(text, "valid") / 86_400_000);
  if (days < 1) throw new UsageError("--valid must be at least 1 day (e.g. 825d or 19800h)");
  return days;
}

/** The `tls` command group. */
export const tlsGroup: CommandGroup = {
  name: "tls",
  summary: "Create a fleet CA, Control's server certificate and node client certificates",
  commands: {
    init: {
      summary: "Create a fleet CA and Control's server certificate in DIR",
      flags: {
        out: { type: "string", value: "DIR", description: "where to write (created if missing)" },
        host: {
          type: "string",
          multiple: true,
          value: "NAME",
          description:
            "a DNS name or IP address Agents and agentctl reach Control by (repeatable; default this host's name, localhost, 127.0.0.1)",
        },
        valid: {
          type: "string",
          value: "DURATION",
          description: "server certificate validity (default 825d)",
        },
      },
      details:
        "Writes DIR/ca.pem and DIR/ca.key (the fleet CA, 10 years; keep ca.key offline),\n" +
        "DIR/server.pem and DIR/server.key (Control's certificate for the agent stream and\n" +
        "the admin API). Refuses to overwrite an existing CA. Then configure Control with\n" +
        "tls.agent { cert, key, clientCa: DIR/ca.pem } and tls.admin { cert, key }, and give\n" +
        "each Agent DIR/ca.pem (--ca) and its own certificate (agentctl tls issue-node).\n" +
        "Needs the openssl command.",
      async run(ctx, { values, positionals }) {
        expectPositionals(positionals, []);
        const out = stringFlag(values, "out");
        if (!out) throw new UsageError("--out DIR is required");
        const hosts = listFlag(values, "host");
        const names = hosts.length > 0 ? hosts : [hostname(), "localhost", "127.0.0.1"];
        const days = daysOf(values);
        await mkdir(out, { recursive: true });
        if (await exists(join(out, "ca.key"))) {
          throw new ExitError(1, `${join(out, "ca.key")} exists: not overwriting a fleet CA`);
        }
        const caKey = join(out, "ca.key");
        await openssl([
          "genpkey",
          "-algorithm",
          "EC",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-out",
          caKey,
        ]);
        await chmod(caKey, 0o600);
        await openssl([
          ...["req", "-x509", "-new", "-key", caKey, "-sha256", "-days", "3650"],
          ...["-subj", "/CN=Agent Control fleet CA", "-out", join(out, "ca.pem")],
          // pathlen:0: the CA signs leaves only, never another CA.
          ...["-addext", "basicConstraints=critical,CA:TRUE,pathlen:0"],
          ...["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ]);
        await chmod(join(out, "ca.pem"), 0o644);
        await issueLeaf({
          caDir: out,
          out,
          name: "server",
          subject: "/CN=agent-control",
          extensions: `subjectAltName=${altNames(names)}\nextendedKeyUsage=serverAuth`,
          days,
        });
        ctx.stdout.write(
          `fleet CA ${join(out, "ca.pem")} (key ${caKey}: keep it offline)\n` +
            `server certificate ${join(out, "server.pem")} for ${names.join(", ")}\n`,
        );
        return 0;
      },
    },
    "issue-node": {
      summary: "Issue node ID a client certificate (SAN URI agentcontrol://node/ID)",
      args: "ID",
      flags: {
        out: { type: "string", value: "DIR", description: "where to write ID.pem and ID.key" },
        "ca-dir": {
          type: "string",
          value: "DIR",
          description: "where the fleet CA is (ca.pem, ca.key; default --out)",
        },
        valid: { type: "string", value: "DURATION", description: "validity (default 825d)" },
        label: {
          type: "string",
          multiple: true,
          value: "K=V",
          description: "a label Control assigns the node when it enrolls (repeatable)",
        },
      },
      details:
        "The certificate names the node only by its SAN URI agentcontrol://node/ID, the form\n" +
        "Control always accepts. Give the Agent --ca ca.pem --cert ID.pem --key ID.key.\n" +
        "Each --label K=V is one more SAN URI agentcontrol://label/K=V: Control trusts it as a\n" +
        "join token's label (canary, pool, selectors) and assigns it when the node enrolls.",
      async run(ctx, { values, positionals }) {
        const [nodeId = ""] = expectPositionals(positionals, ["ID"]);
        if (!isNodeId(nodeId)) {
          throw new UsageError(`"${nodeId.slice(0, 40)}" is not a node id`);
        }
        const out = stringFlag(values, "out");
        if (!out) throw new UsageError("--out DIR is required");
        const labels = certificateLabelNames(parseKeyValues(listFlag(values, "label"), "label"));
        const caDir = stringFlag(values, "ca-dir") ?? out;
        if (!(await exists(join(caDir, "ca.key")))) {
          throw new ExitError(1, `no fleet CA in ${caDir}: run agentctl tls init --out ${caDir}`);
        }
        await mkdir(out, { recursive: true });
        const cert = await issueLeaf({
          caDir,
          out,
          name: nodeId,
          subject: `/CN=${nodeId}`,
          extensions: `subjectAltName=${[`URI:${NODE_URI_PREFIX}${encodeURIComponent(nodeId)}`, ...labels].join(",")}\nextendedKeyUsage=clientAuth`,
          days: daysOf(values),
        });
        const { readFile } = await import("node:fs/promises");
        const fingerprint = new X509Certificate(await readFile(cert)).fingerprint256;
        ctx.stdout.write(
          `client certificate ${cert} for node ${nodeId} (SHA-256 ${fingerprint})\n`,
        );
        return 0;
      },
    },
  },
};
