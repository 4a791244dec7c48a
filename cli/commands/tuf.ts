/**
 * `agentctl tuf init|sign|rotate-root|add-target|remove-target`: the release channel's TUF repository,
 * worked on offline. Root and targets metadata live in one directory (`--repo DIR`:
 * `N.root.json`, `root.json`, `targets.json`); their keys are release keys
 * (`agentctl release keygen`), k-of-n as today's release pins. Control signs snapshot and
 * timestamp with its online keys and serves the directory at `/tuf/`.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MetadataKind } from "@tufjs/models";
import {
  isKnownPlatform,
  isSemver,
  KNOWN_PLATFORMS,
  parsePrivateKey,
  sha256Hex,
} from "../../control/shared/release/index.js";
import { tufSigner } from "../../control/shared/tuf/keys.js";
import {
  buildRoot,
  buildTargets,
  metadataBytes,
  parseMetadata,
  type ReleaseTarget,
  type RoleKeys,
  rootSpecOf,
  withoutRelease,
  withTargets,
} from "../../control/shared/tuf/repository.js";
import {
  checkReadable,
  expectPositionals,
  listFlag,
  parseInteger,
  requiredFlag,
  stringFlag,
  UsageError,
} from "../args.js";
import type { Command, CommandGroup } from "../command.js";
import { plainJson } from "../output.js";

import {
  DEFAULT_ROOT_EXPIRY,
  DEFAULT_TARGETS_EXPIRY,
  expiry,
  newestRoot,
  pins,
  repoFlag,
  roleKeyFlags,
  threshold,
  writeRoot,
} from "./tuf-files.js";

const init: Command = {
  summary: "Create a repository: root version 1 and empty targets, both unsigned",
  flags: {
    ...repoFlag,
    ...roleKeyFlags,
    expires: {
      type: "string",
      value: "DURATION",
      description: `root validity (default ${DEFAULT_ROOT_EXPIRY})`,
    },
    "targets-expires": {
      type: "string",
      value: "DURATION",
      description: `targets validity (default ${DEFAULT_TARGETS_EXPIRY})`,
    },
  },
  details: "Then sign root.json and targets.json with `agentctl tuf sign` (threshold keys each).",
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const repo = checkReadable(requiredFlag(values, "repo"), "--repo", "dir");
    if ((await readdir(repo)).some((n) => n.endsWith(".json"))) {
      throw new UsageError(`${repo} already holds metadata; use rotate-root or add-target`);
    }
    const role = (name: string, keys: ReturnType<typeof pins>, t: number | undefined): RoleKeys => {
      if (keys.length === 0) throw new UsageError(`missing required flag --${name}-key PIN`);
      return { keys, threshold: t ?? 1 };
    };
    const single = (flag: string) => pins({ [flag]: requiredFlag(values, flag) }, flag);
    let root: ReturnType<typeof buildRoot>;
    try {
      root = buildRoot({
        version: 1,
        expires: expiry(ctx, values, "expires", DEFAULT_ROOT_EXPIRY),
        root: role("root", pins(values, "root-key"), threshold(values, "root-threshold")),
        targets: role(
          "targets",
          pins(values, "targets-key"),
          threshold(values, "targets-threshold"),
        ),
        snapshot: { keys: single("snapshot-key"), threshold: 1 },
        timestamp: { keys: single("timestamp-key"), threshold: 1 },
      });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    await writeRoot(repo, root);
    const targets = buildTargets(expiry(ctx, values, "targets-expires", DEFAULT_TARGETS_EXPIRY));
    await writeFile(join(repo, "targets.json"), metadataBytes(targets));
    ctx.stdout.write(
      ctx.output === "json"
        ? plainJson({ repo, root: 1, targets: 1 })
        : `wrote ${repo}/1.root.json and targets.json (unsigned): sign both with tuf sign\n`,
    );
    return 0;
  },
};

const sign: Command = {
  summary: "Add one signature to the newest root or to targets",
  flags: {
    ...repoFlag,
    role: { type: "string", value: "root|targets", description: "the metadata to sign (required)" },
    key: {
      type: "string",
      value: "KEY",
      description: "a private key file from release keygen (required)",
    },
  },
  details: "A rotated root needs the threshold of the previous root's keys and of its own.",
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const repo = checkReadable(requiredFlag(values, "repo"), "--repo", "dir");
    const role = requiredFlag(values, "role");
    if (role !== "root" && role !== "targets") {
      throw new UsageError(`--role must be root or targets, got ${JSON.stringify(role)}`);
    }
    const keyFile = checkReadable(requiredFlag(values, "key"), "--key");
    const signer = await tufSigner(parsePrivateKey(await readFile(keyFile, "utf8")));
    const { root } = await newestRoot(repo);
    const allowed = root.signed.roles[role]?.keyIDs ?? [];
    const previous =
      role === "root" && root.signed.version > 1
        ? parseMetadata(
            MetadataKind.Root,
            await readFile(join(repo, `${root.signed.version - 1}.root.json`)),
          )
        : undefined;
    const allowedBefore = previous?.signed.roles.root?.keyIDs ?? [];
    if (!allowed.includes(signer.key.keyID) && !allowedBefore.includes(signer.key.keyID)) {
      throw new UsageError(`${keyFile} is not a ${role} key of this repository's newest root`);
    }
    let signatures: number;
    let version: number;
    if (role === "root") {
      root.sign(signer.sign);
      await writeRoot(repo, root);
      signatures = Object.keys(root.signatures).length;
      version = root.signed.version;
    } else {
      const file = join(repo, "targets.json");
      const targets = parseMetadata(MetadataKind.Targets, await readFile(file), file);
      targets.sign(signer.sign);
      await writeFile(file, metadataBytes(targets));
      signatures = Object.keys(targets.signatures).length;
      version = targets.signed.version;
    }
    const needed = root.signed.roles[role]?.threshold ?? 1;
    ctx.stdout.write(
      ctx.output === "json"
        ? plainJson({ role, version, keyid: signer.key.keyID, signatures, threshold: needed })
        : `signed ${role} version ${version}: ${signatures} signature(s), threshold ${needed}\n`,
    );
    return 0;
  },
};

const rotateRoot: Command = {
  summary: "Write the next root version with new keys or thresholds (unsigned)",
  flags: {
    ...repoFlag,
    ...roleKeyFlags,
    expires: {
      type: "string",
      value: "DURATION",
      description: `validity (default ${DEFAULT_ROOT_EXPIRY})`,
    },
  },
  details:
    "Roles not named keep their keys and threshold. Sign the new root with the threshold of the old root keys and of the new ones; Agents follow it on their next refresh.",
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const repo = checkReadable(requiredFlag(values, "repo"), "--repo", "dir");
    const { root } = await newestRoot(repo);
    const old = rootSpecOf(root.signed);
    const role = (name: "root" | "targets"): RoleKeys => {
      const keys = pins(values, `${name}-key`);
      const t = threshold(values, `${name}-threshold`);
      return {
        keys: keys.length > 0 ? keys : old[name].keys,
        threshold:
          t ?? (keys.length > 0 ? Math.min(old[name].threshold, keys.length) : old[name].threshold),
      };
    };
    const online = (name: "snapshot" | "timestamp"): RoleKeys => {
      const pin = stringFlag(values, `${name}-key`);
      return pin === undefined ? old[name] : { keys: pins({ k: pin }, "k"), threshold: 1 };
    };
    let next: ReturnType<typeof buildRoot>;
    try {
      next = buildRoot({
        version: root.signed.version + 1,
        expires: expiry(ctx, values, "expires", DEFAULT_ROOT_EXPIRY),
        root: role("root"),
        targets: role("targets"),
        snapshot: online("snapshot"),
        timestamp: online("timestamp"),
      });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    await writeFile(join(repo, `${next.signed.version}.root.json`), metadataBytes(next));
    ctx.stdout.write(
      ctx.output === "json"
        ? plainJson({ repo, root: next.signed.version })
        : `wrote ${repo}/${next.signed.version}.root.json (unsigned): sign it with old and new root keys\n`,
    );
    return 0;
  },
};

const addTarget: Command = {
  summary: "List a release's artifacts in the next targets version (unsigned)",
  flags: {
    ...repoFlag,
    version: { type: "string", value: "V", description: "agent version, semver (required)" },
    sequence: { type: "string", value: "N", description: "release sequence (required)" },
    artifact: {
      type: "string",
      multiple: true,
      value: "PLATFORM=FILE",
      description: "an artifact (repeatable)",
    },
    expires: {
      type: "string",
      value: "DURATION",
      description: `targets validity (default ${DEFAULT_TARGETS_EXPIRY})`,
    },
  },
  details: "Then sign targets.json with tuf sign; Control re-signs snapshot and timestamp.",
  async run(ctx, { values, positionals }) {
    expectPositionals(positionals, []);
    const repo = checkReadable(requiredFlag(values, "repo"), "--repo", "dir");
    const version = requiredFlag(values, "version");
    if (!isSemver(version)) throw new UsageError(`invalid --version "${version}": expected semver`);
    const sequence = parseInteger(
      requiredFlag(values, "sequence"),
      "sequence",
      1,
      Number.MAX_SAFE_INTEGER,
    );
    const items = listFlag(values, "artifact");
    if (items.length === 0) throw new UsageError("missing required flag --artifact PLATFORM=FILE");
    const releases: ReleaseTarget[] = [];
    for (const item of items) {
      const eq = item.indexOf("=");
      const platform = item.slice(0, Math.max(eq, 0));
      if (eq <= 0 || !isKnownPlatform(platform)) {
        throw new UsageError(
          `invalid --artifact "${item}": expected PLATFORM=FILE, PLATFORM one of ${KNOWN_PLATFORMS.join(", ")}`,
        );
      }
      const bytes = await readFile(checkReadable(item.slice(eq + 1), `--artifact ${platform}`));
      releases.push({
        version,
        sequence,
        platform,
        length: bytes.byteLength,
        sha256: sha256Hex(bytes),
      });
    }
    const file = join(repo, "targets.json");
    const current = parseMetadata(MetadataKind.Targets, await readFile(file), file);
    const next = withTargets(
      current,
      releases,
      expiry(ctx, values, "expires", DEFAULT_TARGETS_EXPIRY),
    );
    await writeFile(file, metadataBytes(next));
    ctx.stdout.write(
      ctx.output === "json"
        ? plainJson({ repo, targets: next.signed.version, paths: Object.keys(next.signed.targets) })
        : `targets version ${next.signed.version} lists ${Object.keys(next.signed.targets).length} target(s) (unsigned): sign it with tuf sign\n`,
    );
    return 0;
  },
};

const removeTarget: Command = {
  summary: "Take a release's artifacts out of the next targets version (unsigned)",
  args: "VERSION",
  flags: {
    ...repoFlag,
    expires: {
      type: "string",
      value: "DURATION",
      description: `targets validity (default ${DEFAULT_TARGETS_EXPIRY})`,
    },
  },
  details:
    "What a yank means for Agents that trust the TUF repository: once targets.json is signed\n" +
    "again (tuf sign) and Control serves it, an Agent refuses the release even from a Control\n" +
    "that still offers it. Yank it on Control too: agentctl release yank VERSION --reason TEXT.",
  async run(ctx, { values, positionals }) {
    const [version = ""] = expectPositionals(positionals, ["VERSION"]);
    if (!isSemver(version)) throw new UsageError(`invalid VERSION "${version}": expected semver`);
    const repo = checkReadable(requiredFlag(values, "repo"), "--repo", "dir");
    const file = join(repo, "targets.json");
    const current = parseMetadata(MetadataKind.Targets, await readFile(file), file);
    const { next, removed } = withoutRelease(
      current,
      version,
      expiry(ctx, values, "expires", DEFAULT_TARGETS_EXPIRY),
    );
    if (removed.length === 0)
      throw new UsageError(`${file} lists no artifact of ${version}; nothing changed`);
    await writeFile(file, metadataBytes(next));
    ctx.stdout.write(
      ctx.output === "json"
        ? plainJson({ repo, targets: next.signed.version, removed })
        : `targets version ${next.signed.version} no longer lists ${version} (${removed.length} artifact(s); unsigned): sign it with tuf sign\n`,
    );
    return 0;
  },
};

/** The `tuf` command group. */
export const tufGroup: CommandGroup = {
  name: "tuf",
  summary: "Work offline on the release channel's TUF root and targets metadata",
  commands: {
    init,
    sign,
    "rotate-root": rotateRoot,
    "add-target": addTarget,
    "remove-target": removeTarget,
  },
};
