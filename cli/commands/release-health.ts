/**
 * `agentctl release manifest --health FILE`: the health checks a release carries, read from
 * a JSON file (the manifest's `health` object) and validated as the Agent will read them.
 */
import { readFile } from "node:fs/promises";
import {
  isReleaseError,
  parseHealth,
  type ReleaseHealth,
} from "../../control/shared/release/index.js";
import { checkReadable, UsageError } from "../args.js";

/**
 * The checks in `path`, or undefined without the flag. Throws {@link UsageError} naming the
 * file and the field when it is not JSON or not a valid `health` object.
 */
export async function readHealthFile(path: string | undefined): Promise<ReleaseHealth | undefined> {
  if (path === undefined) return undefined;
  const text = await readFile(checkReadable(path, "--health"), "utf8");
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--health ${path} is not JSON: ${(error as Error).message}`);
  }
  try {
    return parseHealth(doc);
  } catch (error) {
    if (isReleaseError(error)) throw new UsageError(`--health ${path}: ${error.message}`);
    throw error;
  }
}
