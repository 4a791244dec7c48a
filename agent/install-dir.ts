/**
 * The install directory of a real Agent:
 *
 * ```
 * DIR/versions/<version>/agent.mjs   one self-contained artifact per installed version: an ES
 *                                    module run by the host's Node.js,
 * DIR/versions/<version>/agent       or a single executable, run directly
 * DIR/current -> versions/<version>  the version that runs (a symlink, switched atomically)
 * DIR/state.json                     the durable state (node id, token, versions, sequence)
 * DIR/tuf/                           the trusted TUF metadata (root.json first, from install)
 * DIR/supervisors/<version>/agent(.mjs) supervisors installed from releases that carry one
 * DIR/supervisor -> supervisors/<v>  the supervisor in use (absent: the one installed by hand)
 * DIR/supervisor.json                the supervisors' own record (see supervisor-dir.ts)
 * ```
 *
 * Every change is made so that a crash at any instant leaves either the old or the new
 * layout: files are written to a temporary name, fsynced and renamed; the link is made
 * under a temporary name and renamed over `current`; the directory is fsynced after each.
 */
import {
  access,
  constants,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
} from "node:fs/promises";
import { basename, join } from "node:path";
import { type AgentState, loadState } from "./agent-state.js";
import { syncDirectory, writeFileDurably } from "./core/durable-state.js";

/** The kinds of artifact: an ES module run by Node.js, or a single executable. */
export type ArtifactKind = "module" | "executable";

/** The artifact file of each kind inside a version's directory. */
export const ARTIFACT_FILES: Readonly<Record<ArtifactKind, string>> = Object.freeze({
  module: "agent.mjs",
  executable: "agent",
});

/** The artifact file of an ES module artifact (the kind every older install holds). */
export const ARTIFACT_FILE = ARTIFACT_FILES.module;

/** An installed artifact: where it is and how it is started. */
export interface InstalledArtifact {
  readonly kind: ArtifactKind;
  readonly path: string;
}

/** Magic numbers of the executable formats: ELF, Mach-O (32/64-bit, both byte orders), PE. */
const EXECUTABLE_MAGICS: readonly (readonly number[])[] = [
  [0x7f, 0x45, 0x4c, 0x46],
  [0xcf, 0xfa, 0xed, 0xfe],
  [0xce, 0xfa, 0xed, 0xfe],
  [0xfe, 0xed, 0xfa, 0xcf],
  [0xfe, 0xed, 0xfa, 0xce],
  [0x4d, 0x5a],
];

/**
 * The kind of an artifact from its first bytes: an executable format's magic number makes
 * it an executable, anything else is a script for Node.js.
 */
export function artifactKindOf(bytes: Uint8Array): ArtifactKind {
  const executable = EXECUTABLE_MAGICS.some((magic) => magic.every((b, i) => bytes[i] === b));
  return executable ? "executable" : "module";
}

/** Paths of one install directory. */
export interface InstallPaths {
  readonly root: string;
  readonly versions: string;
  readonly current: string;
  readonly state: string;
  /** The trusted TUF metadata of the release channel. */
  readonly tuf: string;
  /** The supervisors installed from releases, one directory per version. */
  readonly supervisors: string;
  /** The pointer (symlink) to the supervisor in use. */
  readonly supervisor: string;
  /** The supervisors' record of updates (written by supervisors only). */
  readonly supervisorRecord: string;
}

/** The paths of the install directory `root`. */
export function installPaths(root: string): InstallPaths {
  return {
    root,
    versions: join(root, "versions"),
    current: join(root, "current"),
    state: join(root, "state.json"),
    tuf: join(root, "tuf"),
    supervisors: join(root, "supervisors"),
    supervisor: join(root, "supervisor"),
    supervisorRecord: join(root, "supervisor.json"),
  };
}

/** The artifact of `version` of `kind` (default: module), whether or not it is installed. */
export function artifactPath(
  paths: InstallPaths,
  version: string,
  kind: ArtifactKind = "module",
): string {
  return join(paths.versions, version, ARTIFACT_FILES[kind]);
}

/**
 * The installed artifact of `version`: its executable when there is one, else its module;
 * undefined when neither is there.
 */
export async function installedArtifact(
  paths: InstallPaths,
  version: string,
): Promise<InstalledArtifact | undefined> {
  for (const kind of ["executable", "module"] as const) {
    const path = artifactPath(paths, version, kind);
    try {
      await access(path, constants.F_OK);
      return { kind, path };
    } catch {
      // not this kind
    }
  }
  return undefined;
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

/**
 * Writes `bytes` as the artifact of `version` (durably; replaces one already there), under
 * the file name of its kind ({@link artifactKindOf}); an executable is written executable
 * by its owner only, and a file of the other kind left by an earlier install is removed.
 */
export async function installVersion(
  paths: InstallPaths,
  version: string,
  bytes: Uint8Array,
): Promise<ArtifactKind> {
  const dir = join(paths.versions, version);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const kind = artifactKindOf(bytes);
  await writeDurably(join(dir, ARTIFACT_FILES[kind]), bytes, kind === "executable" ? 0o700 : 0o600);
  const other = kind === "executable" ? "module" : "executable";
  await rm(join(dir, ARTIFACT_FILES[other]), { force: true });
  await syncDirectory(dir);
  await syncDirectory(paths.versions);
  return kind;
}

/** Writes `bytes` to a temporary name with `mode`, fsyncs, renames over `file` (the caller fsyncs the directory). */
export async function writeDurably(file: string, bytes: Uint8Array, mode: number): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, "w", mode);
  try {
    await handle.writeFile(bytes);
    await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
}

/** Points `current` at `version` in one rename, then fsyncs the directory. */
export async function switchCurrent(paths: InstallPaths, version: string): Promise<void> {
  const temp = `${paths.current}.${process.pid}.tmp`;
  await rm(temp, { force: true });
  await symlink(join("versions", version), temp);
  await rename(temp, paths.current);
  await syncDirectory(paths.root);
}

/**
 * The versions something recorded still names, which must never be deleted: the one
 * `current` points at and every version the durable state names (the running and previous
 * ones, both ends of a switch in progress and the previous version it would restore). When
 * the state cannot be read, every installed version counts as named (nothing is deleted).
 */
export async function namedVersions(paths: InstallPaths): Promise<ReadonlySet<string> | "all"> {
  const named = new Set<string>();
  const current = await readCurrent(paths);
  if (current !== undefined) named.add(current);
  let state: Partial<AgentState> | undefined;
  try {
    state = await loadState(paths);
  } catch {
    return "all";
  }
  for (const version of [
    state?.version,
    state?.previousVersion,
    state?.switch?.from,
    state?.switch?.to,
    state?.switch?.previousBefore,
  ]) {
    if (version !== undefined && version !== "") named.add(version);
  }
  return named;
}

/**
 * Deletes the files of `version`, unless a pointer names it ({@link namedVersions}: never
 * the one `current` points at, nor one the state records as running, previous or part of a
 * switch), whatever the caller asked: a version something may return to is never deleted.
 */
export async function removeVersion(paths: InstallPaths, version: string): Promise<void> {
  if (version === "" || version.includes("/") || version === "." || version === "..") return;
  const named = await namedVersions(paths);
  if (named === "all" || named.has(version)) return;
  await rm(join(paths.versions, version), { recursive: true, force: true });
  await syncDirectory(paths.versions);
}

/** The installed versions: those whose directory holds an artifact. */
export async function installedVersions(paths: InstallPaths): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(paths.versions);
  } catch {
    return [];
  }
  const installed: string[] = [];
  for (const name of names) {
    if ((await installedArtifact(paths, name)) !== undefined) installed.push(name);
  }
  return installed;
}

/** Deletes every installed version but `keep` (and never one a pointer names, see {@link removeVersion}). */
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
