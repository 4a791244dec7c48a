/**
 * The output path of `agent:build`, checked before anything is built: an operator who
 * mistyped a directory learns it at once, in one line naming it, not after the build.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/**
 * Why `out` cannot receive the artifact (its directory is missing, is not a directory or is
 * not writable, or `out` itself is a directory), or undefined when it can. Reads only.
 */
export async function outPathProblem(out: string): Promise<string | undefined> {
  const file = resolve(out);
  const dir = dirname(file);
  const target = await stat(file).catch(() => undefined);
  if (target?.isDirectory()) return `--out ${out}: ${file} is a directory; name the file to write`;
  const parent = await stat(dir).catch((error: NodeJS.ErrnoException) => error);
  if (parent instanceof Error) {
    if (parent.code === "ENOENT") {
      return `--out ${out}: the directory ${dir} does not exist; create it first (mkdir -p ${dir})`;
    }
    if (parent.code === "ENOTDIR") {
      return `--out ${out}: ${await nearestExisting(dir)} is not a directory`;
    }
    return `--out ${out}: cannot read ${dir}: ${parent.message}`;
  }
  if (!parent.isDirectory()) return `--out ${out}: ${dir} is not a directory`;
  const writable = await access(dir, constants.W_OK).then(
    () => true,
    () => false,
  );
  return writable ? undefined : `--out ${out}: the directory ${dir} is not writable`;
}

/** The nearest ancestor of `path` (or `path` itself) that exists: the file a path runs into. */
async function nearestExisting(path: string): Promise<string> {
  let at = path;
  while (dirname(at) !== at && (await stat(at).catch(() => undefined)) === undefined) {
    at = dirname(at);
  }
  return at;
}
