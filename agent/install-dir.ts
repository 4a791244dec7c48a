/**
 * The install directory of a real Agent:
 *
 * ```
 * DIR/versions/<version>/agent.mjs   one self-contained artifact per installed version
 * DIR/current -> versions/<version>  the version that runs (a symlink, switched atomically)
 * DIR/state.json                     the durable state (node id, token, versions, sequence)
 * DIR/tuf/                           the trusted TUF metadata (root.json first, from install)
 * ```
 *
 * Every change is made so that a crash at any instant leaves either the old or the new
 * layout: files are written to a temporary name, fsynced and renamed; the link is made
 * under a temporary name and renamed over `current`; the directory is fsynced after each.
 */
import { access, mkdir, readdir, readFile, readlink, rename, rm, symlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { syncDirectory, writeFileDurably } from "./core/durable-state.js";

/** The artifact file inside a version's directory. */
export const ARTIFACT_FILE = "agent.mjs";

/** Paths of one install directory. */
export interface InstallPaths {
  readonly root: string;
  readonly versions: string;
  readonly current: string;
  readonly state: string;
  /** The trusted TUF metadata of the release channel. */
  readonly tuf: string;
}

/** The paths of the install directory `root`. */
export function installPaths(root: string): InstallPaths {
  return {
    root,
    versions: join(root, "versions"),
    current: join(root, "current"),
    state: join(root, "state.json"),
    tuf: join(root, "tuf"),
  };
}

/** The artifact of `version` (whether or not it is installed). */
export function artifactPath(paths: InstallPaths, version: string): string {
  return join(paths.versions, version, ARTIFACT_FILE);
}

/** The version `current` points at, or undefined when there is no link yet. */
export async function readCurrent(paths: InstallPaths): Promise<string | undefined> {
  try {
    return basename(await readlink(paths.current));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Writes `bytes` as the artifact of `version` (durably; replaces one already there). */
export async function installVersion(
  paths: InstallPaths,
  version: string,
  bytes: Uint8Array,
): Promise<void> {
  const dir = join(paths.versions, version);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await writeFileDurably(join(dir, ARTIFACT_FILE), bytes);
  await syncDirectory(paths.versions);
}

/** Points `current` at `version` in one rename, then fsyncs the directory. */
export async function switchCurrent(paths: InstallPaths, version: string): Promise<void> {
  const temp = `${paths.current}.${process.pid}.tmp`;
  await rm(temp, { force: true });
  await symlink(join("versions", version), temp);
  await rename(temp, paths.current);
  await syncDirectory(paths.root);
}

/** Deletes the files of `version` (never the one `current` points at). */
export async function removeVersion(paths: InstallPaths, version: string): Promise<void> {
  if (version === "" || version === (await readCurrent(paths))) return;
  await rm(join(paths.versions, version), { recursive: true, force: true });
  await syncDirectory(paths.versions);
}

/** Deletes every installed version but `keep` (and never the one `current` points at). */
export async function removeVersionsBut(paths: InstallPaths, keep: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(paths.versions);
  } catch {
    return;
  }
  for (const name of names) if (name !== keep) await removeVersion(paths, name);
}

/**
 * Gives the install its first trusted TUF root: copies `rootFile` to `DIR/tuf/root.json`
 * unless a root is already trusted there (a later root, reached by rotation, is never
 * replaced by the install-time one).
 */
export async function trustInitialRoot(paths: InstallPaths, rootFile: string): Promise<void> {
  const trusted = join(paths.tuf, "root.json");
  try {
    await access(trusted);
    return;
  } catch {
    // none yet
  }
  await mkdir(paths.tuf, { recursive: true });
  await writeFileDurably(trusted, await readFile(rootFile));
}
