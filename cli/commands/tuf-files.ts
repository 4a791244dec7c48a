/**
 * What the `agentctl tuf` commands share: the repository directory's files (the newest
 * `N.root.json`, `root.json`), key and threshold flags, and expiry durations.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MetadataKind } from "@tufjs/models";
import { tufKey } from "../../control/shared/tuf/keys.js";
import {
  type buildRoot,
  metadataBytes,
  parseMetadata,
} from "../../control/shared/tuf/repository.js";
import { listFlag, parseDuration, parseInteger, stringFlag, UsageError } from "../args.js";

/** Default validity of a root: one year. */
export const DEFAULT_ROOT_EXPIRY = "8760h";
/** Default validity of targets: 90 days. */
export const DEFAULT_TARGETS_EXPIRY = "2160h";

/** The `--repo DIR` flag every tuf command takes. */
export const repoFlag = {
  repo: { type: "string", value: "DIR", description: "the repository directory (required)" },
} as const;
/** The flags naming each role's keys (pins) and thresholds. */
export const roleKeyFlags = {
  "root-key": {
    type: "string",
    multiple: true,
    value: "PIN",
    description: "a root key's pin (repeatable)",
  },
  "root-threshold": {
    type: "string",
    value: "K",
    description: "root signatures needed (default 1)",
  },
  "targets-key": {
    type: "string",
    multiple: true,
    value: "PIN",
    description: "a targets key's pin (repeatable)",
  },
  "targets-threshold": {
    type: "string",
    value: "K",
    description: "targets signatures needed (default 1)",
  },
  "snapshot-key": { type: "string", value: "PIN", description: "Control's online snapshot key" },
  "timestamp-key": { type: "string", value: "PIN", description: "Control's online timestamp key" },
} as const;

/** The TUF keys of a repeatable pin flag; a bad pin is a usage error naming the flag. */
export function pins(values: Record<string, unknown>, flag: string): ReturnType<typeof tufKey>[] {
  return listFlag(values as never, flag).map((pin) => {
    try {
      return tufKey(pin.trim());
    } catch (error) {
      throw new UsageError(`--${flag}: ${(error as Error).message}`);
    }
  });
}

/** A threshold flag's value (1 to 1000), undefined when absent. */
export function threshold(values: Record<string, unknown>, flag: string): number | undefined {
  const text = stringFlag(values as never, flag);
  return text === undefined ? undefined : parseInteger(text, flag, 1, 1000);
}

/** The newest `N.root.json` in `repo`, with its version. */
export async function newestRoot(repo: string) {
  const names = await readdir(repo).catch(() => {
    throw new UsageError(`${repo} is not a TUF repository directory`);
  });
  const versions = names
    .map((n) => /^(\d+)\.root\.json$/.exec(n)?.[1])
    .filter((v): v is string => v !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const version = versions.at(-1);
  if (version === undefined) throw new UsageError(`${repo} holds no N.root.json; run tuf init`);
  const file = join(repo, `${version}.root.json`);
  return { file, root: parseMetadata(MetadataKind.Root, await readFile(file), file) };
}

/** Writes `root` as `N.root.json` and `root.json`. */
export async function writeRoot(repo: string, root: ReturnType<typeof buildRoot>) {
  const bytes = metadataBytes(root);
  await writeFile(join(repo, `${root.signed.version}.root.json`), bytes);
  await writeFile(join(repo, "root.json"), bytes);
}

/** `now` plus a duration flag's value (or `fallback`). */
export function expiry(
  ctx: { now(): Date },
  values: Record<string, unknown>,
  flag: string,
  fallback: string,
) {
  return new Date(
    ctx.now().getTime() + parseDuration(stringFlag(values as never, flag) ?? fallback, flag),
  );
}
