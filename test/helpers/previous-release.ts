/**
 * A checkout of an earlier commit of this repository, to run the previous release of Control
 * beside HEAD: a detached `git worktree` in a temporary directory, with this checkout's
 * node_modules linked in (so it installs nothing and reaches no network).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A worktree of an earlier commit; `remove()` deletes it and its git bookkeeping. */
export interface PreviousCheckout {
  /** The worktree's root: run `node --import tsx control/main.ts` with this as cwd. */
  readonly path: string;
  remove(): Promise<void>;
}

/** Where {@link checkoutPrevious} puts the worktree under `dir`. */
function previousPath(dir: string): string {
  return join(dir, "previous");
}

/**
 * Removes the worktree {@link checkoutPrevious} made (or began to make) under `dir`, and git's
 * record of it; nothing when there is none. For a test's cleanup, however far its set-up got.
 */
export async function removePrevious(repo: string, dir: string): Promise<void> {
  // --force: the worktree has an untracked node_modules link and may be mid-write.
  await run("git", ["worktree", "remove", "--force", previousPath(dir)], { cwd: repo }).catch(
    () => {},
  );
  await run("git", ["worktree", "prune"], { cwd: repo }).catch(() => {});
}

/**
 * Checks `commit` out as a detached worktree at `<dir>/previous` of the repository at `repo`,
 * links `repo`'s node_modules into it and returns it. Throws with git's own words when the
 * commit is not in the clone (a shallow clone: `git fetch --unshallow`); removes what it made
 * when a later step fails.
 */
export async function checkoutPrevious(
  repo: string,
  commit: string,
  dir: string,
): Promise<PreviousCheckout> {
  const path = previousPath(dir);
  const remove = () => removePrevious(repo, dir);
  await fetchIfMissing(repo, commit);
  try {
    await run("git", ["worktree", "add", "--detach", "--quiet", path, commit], { cwd: repo });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim() ?? String(error);
    throw new Error(
      `cannot check out commit ${commit} (a shallow clone needs \`git fetch --unshallow\`): ${stderr}`,
    );
  }
  try {
    await symlink(join(repo, "node_modules"), join(path, "node_modules"), "dir");
    if (!existsSync(join(path, "control", "main.ts"))) {
      throw new Error(`commit ${commit} has no control/main.ts`);
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}

/**
 * Brings `commit` into `repo` when a shallow clone lacks it: from `origin`, by its id and then
 * by unshallowing (a local origin needs no network). Leaves the failure to `git worktree add`,
 * whose message names the commit.
 */
async function fetchIfMissing(repo: string, commit: string): Promise<void> {
  const present = () =>
    run("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: repo }).then(
      () => true,
      () => false,
    );
  if (await present()) return;
  for (const args of [
    ["fetch", "--quiet", "origin", commit],
    ["fetch", "--quiet", "--unshallow", "origin"],
  ]) {
    await run("git", args, { cwd: repo }).catch(() => undefined);
    if (await present()) return;
  }
}
