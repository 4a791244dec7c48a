/**
 * Whether the release channel's targets metadata lists a release: Control refuses to start
 * a campaign to a release the channel does not list, since every Agent that trusts the
 * channel would refuse it (`untrusted_release`) and the canary batch would only breach.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { MetadataKind } from "@tufjs/models";
import { parseMetadata } from "../shared/tuf/repository.js";

/** Undefined when `dir`'s targets.json lists `version` at `sequence`; else the reason. */
export async function unlistedReason(
  dir: string,
  version: string,
  sequence: number,
): Promise<string | undefined> {
  let targets: ReturnType<typeof parseMetadata<MetadataKind.Targets>>;
  try {
    targets = parseMetadata(MetadataKind.Targets, await readFile(join(dir, "targets.json")));
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
