/**
 * `agentctl release keygen|manifest|sign|verify`: offline release signing. None of these
 * contacts a server; they only read and write local files.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import {
  buildManifest,
  createEnvelope,
  type Envelope,
  generateKeyPair,
  isKnownPlatform,
  isReleaseError,
  isSemver,
  KNOWN_PLATFORMS,
  keyIdOf,
  type ManifestArtifact,
  parseEnvelope,
  parsePin,
  parsePrivateKey,
  publicKeyOf,
  serializeEnvelope,
  serializePrivateKey,
  sha256Hex,
  signEnvelope,
  verifyEnvelope,
} from "../../control/shared/release/index.js";
import {
  boolFlag,
  checkReadable,
  expectPositionals,
  listFlag,
  parseDuration,
  parseInteger,
  requiredFlag,
  stringFlag,
  UsageError,
} from "../args.js";
import { type Command, type Context, ExitError } from "../command.js";
import { plainJson } from "../output.js";
import { readHealthFile } from "./release-health.js";

/** How long a manifest stays valid when `--expires` is not given. */
export const DEFAULT_MANIFEST_EXPIRY = "720h";

async function writeNew(path: string, data: string, mode: number, force: boolean): Promise<void> {
  try {
    await writeFile(path, data, { mode, flag: force ? "w" : "wx" });
  } catch (error) {
    if ((error as { code?: unknown }).code === "EEXIST") {
      throw new UsageError(`${path} already exists; pass --force to overwrite it`);
    }
    throw error;
  }
  await chmod(path, mode);
}

const keygen: Command = {
  summary: "Create an ed25519 signing key (KEY, mode 0600) and its public pin (KEY.pub)",
  flags: {
    out: { type: "string", value: "KEY", description: "private key file to write (required)" },
    force: { type: "boolean", description: "overwrite existing files" },
  },
  details: 'With --json: {"key": PATH, "publicKey": PATH, "pin": PIN, "keyid": HEX}.',
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const out = requiredFlag(values, "out");
    const force = boolFlag(values, "force");
    const pair = await generateKeyPair();
    await writeNew(out, serializePrivateKey(pair.privateKey), 0o600, force);
    await writeNew(`${out}.pub`, `${pair.pin}\n`, 0o644, force);
    if (ctx.output === "json") {
      ctx.stdout.write(
        plainJson({ key: out, publicKey: `${out}.pub`, pin: pair.pin, keyid: pair.keyid }),
      );
    } else {
      ctx.stdout.write(`${pair.pin}\n`);
      ctx.stderr.write(`wrote ${out} (keep it secret) and ${out}.pub; key id ${pair.keyid}\n`);
    }
    return 0;
  },
};

function parseArtifacts(items: readonly string[]): [string, string][] {
  if (items.length === 0) throw new UsageError("missing required flag --artifact PLATFORM=FILE");
  const seen = new Set<string>();
  return items.map((item) => {
    const eq = item.indexOf("=");
    if (eq <= 0 || eq === item.length - 1) {
      throw new UsageError(
        `invalid --artifact "${item}": expected PLATFORM=FILE such as linux-amd64=./agent`,
      );
    }
    const platform = item.slice(0, eq);
    if (!isKnownPlatform(platform)) {
      throw new UsageError(
        `invalid --artifact "${item}": platform ${platform} is not one of ${KNOWN_PLATFORMS.join(", ")}`,
      );
    }
    if (seen.has(platform)) throw new UsageError(`--artifact gives platform ${platform} twice`);
    seen.add(platform);
    return [platform, checkReadable(item.slice(eq + 1), `--artifact ${platform}`)];
  });
}

const manifest: Command = {
  summary: "Write a release manifest from artifact files (sha256 and size computed)",
  flags: {
    version: { type: "string", value: "V", description: "agent version, semver (required)" },
    sequence: {
      type: "string",
      value: "N",
      description: "release sequence, above every earlier one (required)",
    },
    artifact: {
      type: "string",
      multiple: true,
      value: "PLATFORM=FILE",
      description: "an artifact, such as linux-amd64=dist/agent (repeatable, at least one)",
    },
    expires: {
      type: "string",
      value: "DURATION",
      description: `validity from now (default ${DEFAULT_MANIFEST_EXPIRY})`,
    },
    "url-base": {
      type: "string",
      value: "URL",
      description:
        "artifacts are downloaded from URL/<file name> (default: uploaded to Control by register)",
    },
    health: {
      type: "string",
      value: "FILE",
      description:
        'health checks the Agent runs after the new version starts: a JSON file {"checks": [...], "periodSeconds", "intervalSeconds"}',
    },
    supervisor: {
      type: "boolean",
      description:
        "the release also updates the node's supervisor (its artifact is tried as the supervisor; needs Agents that know the field)",
    },
    out: { type: "string", value: "MANIFEST", description: "manifest file to write (required)" },
  },
  details:
    'Each artifact entry names its file by base name ("file") unless --url-base gives a url.\n' +
    'With --json: {"manifest": PATH, "version", "sequence", "expires", "artifacts": {PLATFORM: {sha256, size, file|url}}}.',
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const version = requiredFlag(values, "version");
    if (!isSemver(version)) {
      throw new UsageError(
        `invalid --version "${version}": expected a semantic version such as 1.4.0`,
      );
    }
    const sequence = parseInteger(
      requiredFlag(values, "sequence"),
      "sequence",
      1,
      Number.MAX_SAFE_INTEGER,
    );
    const expiresMs = parseDuration(
      stringFlag(values, "expires") ?? DEFAULT_MANIFEST_EXPIRY,
      "expires",
    );
    const urlBase = checkUrlBase(stringFlag(values, "url-base"));
    const out = requiredFlag(values, "out");
    const health = await readHealthFile(stringFlag(values, "health"));
    const artifacts: Record<string, ManifestArtifact> = {};
    const files = parseArtifacts(listFlag(values, "artifact"));
    for (const [platform, path] of files) {
      const bytes = await readFile(path);
      const name = basename(path);
      artifacts[platform] = {
        sha256: sha256Hex(bytes),
        size: bytes.length,
        ...(urlBase === undefined
          ? { file: name }
          : { url: `${urlBase}/${encodeURIComponent(name)}` }),
      };
    }
    const expires = new Date(ctx.now().getTime() + expiresMs);
    const bytes = buildManifest({
      version,
      sequence,
      expires,
      artifacts,
      ...(health === undefined ? {} : { health }),
      ...(boolFlag(values, "supervisor") ? { supervisor: true } : {}),
    });
    await writeFile(out, bytes);
    const doc = JSON.parse(new TextDecoder().decode(bytes)) as { expires: string };
    if (ctx.output === "json") {
      ctx.stdout.write(
        plainJson({ manifest: out, version, sequence, expires: doc.expires, artifacts }),
      );
    } else {
      ctx.stdout.write(
        `wrote ${out}: agent ${version} sequence ${sequence}, ${Object.keys(artifacts).length} artifact(s)${health === undefined ? "" : `, ${health.checks.length} health check(s)`}, expires ${doc.expires}\n`,
      );
    }
    return 0;
  },
};

/** Reads a manifest or an envelope file: an envelope is parsed strictly, a manifest wrapped. */
export function envelopeFromFile(bytes: Uint8Array): Envelope {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    doc = undefined;
  }
  const isEnvelope = typeof doc === "object" && doc !== null && "payloadType" in doc;
  return isEnvelope ? parseEnvelope(bytes) : createEnvelope(bytes);
}

const sign: Command = {
  summary: "Add one signature to a manifest (making it an envelope) or to an envelope",
  flags: {
    key: {
      type: "string",
      value: "KEY",
      description: "private key file from release keygen (required)",
    },
    in: { type: "string", value: "FILE", description: "manifest or envelope to sign (required)" },
    out: {
      type: "string",
      value: "ENVELOPE",
      description: "envelope file to write (required; may equal --in)",
    },
  },
  details: 'With --json: {"envelope": PATH, "keyid": HEX, "signatures": [KEYID, ...]}.',
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const keyPath = checkReadable(requiredFlag(values, "key"), "--key");
    const inPath = checkReadable(requiredFlag(values, "in"), "--in");
    const out = requiredFlag(values, "out");
    const privateKey = parsePrivateKey(await readFile(keyPath, "utf8"));
    const input = envelopeFromFile(await readFile(inPath));
    const signed = await signEnvelope(input, privateKey);
    await writeFile(out, serializeEnvelope(signed));
    const keyid = keyIdOf(await publicKeyOf(privateKey));
    const keyids = signed.signatures.map((s) => s.keyid);
    if (ctx.output === "json") {
      ctx.stdout.write(plainJson({ envelope: out, keyid, signatures: keyids }));
    } else {
      ctx.stdout.write(
        `signed ${out} with key ${keyid}; it now has ${keyids.length} signature(s)\n`,
      );
    }
    return 0;
  },
};

const verify: Command = {
  summary:
    "Check an envelope as Control would: threshold signatures from pinned keys, valid, not expired",
  args: "ENVELOPE",
  flags: {
    pin: {
      type: "string",
      multiple: true,
      value: "PIN",
      description: "a trusted public key pin (repeatable; default env AGENT_CONTROL_RELEASE_PINS)",
    },
    threshold: {
      type: "string",
      value: "K",
      description:
        "distinct pinned keys that must have signed (default env AGENT_CONTROL_RELEASE_THRESHOLD, else 1)",
    },
  },
  details:
    "Exit 0 when it would be accepted, 1 with the refusal reason otherwise.\n" +
    'With --json: {"ok": true, "version", "sequence", "expires", "threshold", "signerKeyIds": [...], "platforms": [...]}.',
  async run(ctx, { values, positionals }) {
    const [path = ""] = expectPositionals(positionals, ["ENVELOPE"]);
    const pins = pinsOf(ctx, listFlag(values, "pin"));
    const thresholdText =
      stringFlag(values, "threshold") ?? ctx.env.AGENT_CONTROL_RELEASE_THRESHOLD ?? "1";
    const threshold = parseInteger(thresholdText, "threshold", 1, 1000);
    checkReadable(path, "ENVELOPE");
    try {
      const envelope = parseEnvelope(await readFile(path));
      const release = await verifyEnvelope(envelope, { pins, threshold, now: ctx.now() });
      const { version, sequence, expires, artifacts } = release.manifest;
      if (ctx.output === "json") {
        ctx.stdout.write(
          plainJson({
            ok: true,
            version,
            sequence,
            expires,
            threshold,
            signerKeyIds: release.signerKeyIds,
            platforms: Object.keys(artifacts),
          }),
        );
      } else {
        ctx.stdout.write(
          `OK: agent ${version} sequence ${sequence}, expires ${expires}; ` +
            `${release.signerKeyIds.length} valid signature(s) from pinned keys (${release.signerKeyIds.join(", ")}), threshold ${threshold}; ` +
            `platforms ${Object.keys(artifacts).join(", ")}\n`,
        );
      }
      return 0;
    } catch (error) {
      if (isReleaseError(error))
        throw new ExitError(1, `refused: ${error.message} (${error.reason})`);
      throw error;
    }
  },
};

function pinsOf(ctx: Context, flagged: string[]): string[] {
  const pins =
    flagged.length > 0
      ? flagged
      : (ctx.env.AGENT_CONTROL_RELEASE_PINS ?? "")
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p !== "");
  if (pins.length === 0) {
    throw new UsageError(
      "missing --pin (or AGENT_CONTROL_RELEASE_PINS): verify needs the trusted keys",
    );
  }
  const source = flagged.length > 0 ? "--pin" : "AGENT_CONTROL_RELEASE_PINS";
  for (const pin of pins) {
    try {
      parsePin(pin);
    } catch (error) {
      throw new UsageError(`invalid ${source}: ${(error as Error).message}`);
    }
  }
  return pins;
}

/** `--url-base`: an http(s) URL artifacts are downloaded from; returned without trailing slashes. */
function checkUrlBase(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    /\s/.test(text)
  ) {
    throw new UsageError(
      `invalid --url-base "${text}": expected an http:// or https:// URL such as https://downloads.example/agent`,
    );
  }
  return text.replace(/\/+$/, "");
}

/** The offline `release` subcommands, by name. */
export const offlineReleaseCommands: Readonly<Record<string, Command>> = {
  keygen,
  manifest,
  sign,
  verify,
};
