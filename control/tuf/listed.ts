/**
 * Whether the release channel's targets metadata lists a release: Control refuses to start
 * a campaign to a release the channel does not list, since every Agent that trusts the
 * channel would refuse it (`untrusted_release`) and the canary batch would only breach.
 */
import { join } from "node:path";
import {
  NODE_TARGETS_IO,
  type TargetsFile,
  type TargetsFileIo,
  targetsFile,
} from "./targets-file.js";

/** Why a release is not usable on the channel, or undefined when it is listed at its sequence. */
export type ListedCheck = (version: string, sequence: number) => Promise<string | undefined>;

/**
 * The check of `dir`'s targets.json, read once per change of the file (see targets-file.ts):
 * undefined when it lists `version` at `sequence`; else the reason.
 */
export function listedCheck(dir: string, io: TargetsFileIo = NODE_TARGETS_IO): ListedCheck {
  const file = targetsFile(join(dir, "targets.json"), io);
  return (version, sequence) => unlistedIn(file, version, sequence);
}

async function unlistedIn(
  file: TargetsFile,
  version: string,
  sequence: number,
): Promise<string | undefined> {
  let targets: Awaited<ReturnType<TargetsFile["read"]>>;
  try {
    targets = await file.read();
  } catch (error) {
    return `the release channel's targets.json cannot be read: ${(error as Error).message}`;
  }
  const listed = Object.values(targets.signed.targets).filter(
    (t) => t.path.startsWith(`agent/${version}/`) && t.custom.version === version,
  );
  if (listed.length === 0) {
    return `release ${version} is not listed in the release channel's TUF targets (agentctl tuf add-target, then tuf sign)`;
  }
  if (listed.some((t) => String(t.custom.sequence) !== String(sequence))) {
    return `the TUF targets list ${version} with another sequence than its registered ${sequence}`;
  }
  return undefined;
}

/** One check per repository directory, so every start in this process shares its read. */
const checks = new Map<string, ListedCheck>();
/** Directories kept at once (a process serves one; tests make many). */
const MAX_DIRS = 16;

/** Undefined when `dir`'s targets.json lists `version` at `sequence`; else the reason. */
export async function unlistedReason(
  dir: string,
  version: string,
  sequence: number,
): Promise<string | undefined> {
  let check = checks.get(dir);
  if (check === undefined) {
    check = listedCheck(dir);
    if (checks.size >= MAX_DIRS) checks.delete(checks.keys().next().value as string);
    checks.set(dir, check);
  }
  return await check(version, sequence);
}
