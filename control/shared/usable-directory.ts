/**
 * Whether a program may keep its files in a directory: one check for Control's data
 * directory and the simulator's `--state-dir`, made before anything starts, so a wrong path
 * is a one-line usage error instead of a failure deep inside a database start or an agent.
 */
import { accessSync, constants, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * Why `dir` cannot be used, or undefined when it can: it is a directory this process may
 * read, write and enter, or it does not exist yet and its nearest existing parent is such a
 * directory (so `mkdir -p` will make it). The reason reads after the path ("is not a
 * directory", "cannot be created in /srv: permission denied").
 */
export function unusableDirectory(dir: string): string | undefined {
  if (dir === "") return "must name a directory";
  const target = resolve(dir);
  let at = target;
  for (;;) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = dirname(at);
      if ((code === "ENOENT" || code === "ENOTDIR") && parent !== at) {
        at = parent;
        continue;
      }
      return `cannot be used (${code ?? "unreadable"})`;
    }
    if (!isDirectory) {
      return at === target ? "is not a directory" : `cannot be created: ${at} is not a directory`;
    }
    try {
      accessSync(at, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch {
      return at === target ? "is not writable" : `cannot be created in ${at}: permission denied`;
    }
    return undefined;
  }
}
