/**
 * The supervisor's files in the install directory:
 *
 * ```
 * DIR/supervisors/<version>/agent(.mjs)  a supervisor installed from a verified release: a link
 *                                        to (else a copy of) that version's artifact (kept when
 *                                        versions/ is cleaned by a confirm)
 * DIR/supervisor -> supervisors/<v>      the supervisor in use; absent: the one installed by hand
 * DIR/supervisor.json                    the supervisors' record ({@link SupervisorRecord})
 * ```
 *
 * Changed like the rest of the directory: files written under a temporary name, fsynced and
 * renamed, the pointer made under a temporary name and renamed over, the directory fsynced
 * after each; a crash at any instant leaves the old or the new pointer, each naming a
 * supervisor whose files are complete.
 */
import {
  copyFile,
  link,
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
import { syncDirectory, writeFileDurably } from "./core/durable-state.js";
import type { SupervisorRecord } from "./core/supervisor-update.js";
import {
  ARTIFACT_FILES,
  type InstalledArtifact,
  type InstallPaths,
  installedArtifact,
} from "./install-dir.js";

/** The supervisor the pointer names ("" when there is no pointer: the one installed by hand). */
export async function readSupervisorInUse(paths: InstallPaths): Promise<string> {
  try {
    return basename(await readlink(paths.supervisor));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw error;
  }
}

/** The installed supervisor of `version` (its executable, else its module), if its file is there. */
export async function supervisorArtifact(
  paths: InstallPaths,
  version: string,
): Promise<InstalledArtifact | undefined> {
  if (version === "" || version.includes("/") || version === "." || version === "..") {
    return undefined;
  }
  // The same layout as versions/: reuse its lookup on the supervisors' directory.
  return installedArtifact({ ...paths, versions: paths.supervisors }, version);
}

/**
 * Installs the artifact of the installed `version` (under versions/, verified when it was
 * installed) as the supervisor of `version`: linked (else copied) under a temporary name,
 * fsynced, renamed.
 * Throws when `version` has no artifact.
 */
export async function installSupervisor(paths: InstallPaths, version: string): Promise<void> {
  const source = await installedArtifact(paths, version);
  if (source === undefined) throw new Error(`${version} has no installed artifact to copy`);
  const dir = join(paths.supervisors, version);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, ARTIFACT_FILES[source.kind]);
  const temp = `${file}.${process.pid}.tmp`;
  await rm(temp, { force: true });
  try {
    // A second name for the installed file (never changed in place: versions are replaced
    // by rename), so it outlives the version's directory without copying its bytes.
    await link(source.path, temp);
  } catch {
    await copyFile(source.path, temp);
  }
  const handle = await open(temp, "r+");
  try {
    await handle.chmod(source.kind === "executable" ? 0o700 : 0o600);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await syncDirectory(dir);
  await syncDirectory(paths.supervisors);
}

/** Points `supervisor` at `supervisors/<version>` in one rename, then fsyncs the directory. */
export async function moveSupervisorPointer(paths: InstallPaths, version: string): Promise<void> {
  const temp = `${paths.supervisor}.${process.pid}.tmp`;
  await rm(temp, { force: true });
  await symlink(join("supervisors", version), temp);
  await rename(temp, paths.supervisor);
  await syncDirectory(paths.root);
}

/**
 * The supervisors' record; `{}` when there is none, undefined when it cannot be read (then
 * nothing is deleted on its account).
 */
export async function readSupervisorRecord(
  paths: InstallPaths,
): Promise<SupervisorRecord | undefined> {
  let text: string;
  try {
    text = await readFile(paths.supervisorRecord, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    return undefined;
  }
  try {
    const value = JSON.parse(text) as SupervisorRecord;
    if (typeof value !== "object" || value === null) return undefined;
    const names = [value.previous, value.trial?.version, value.trial?.from, value.failure?.version];
    // Versions become paths: anything but a plain name makes the record unreadable.
    return names.every((n) => n === undefined || n === "" || isPlainName(n)) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A version usable as one path segment. */
function isPlainName(name: unknown): boolean {
  return (
    typeof name === "string" &&
    /^[A-Za-z0-9._+-]{1,128}$/.test(name) &&
    name !== "." &&
    name !== ".."
  );
}

/** Saves the supervisors' record atomically and durably. */
export function writeSupervisorRecord(
  paths: InstallPaths,
  record: SupervisorRecord,
): Promise<void> {
  return writeFileDurably(paths.supervisorRecord, `${JSON.stringify(record, null, 2)}\n`);
}

/** The versions with a directory under supervisors/. */
export async function installedSupervisors(paths: InstallPaths): Promise<string[]> {
  try {
    return (await readdir(paths.supervisors)).filter((name) => !name.endsWith(".tmp")).sort();
  } catch {
    return [];
  }
}

/** Deletes the supervisors of `versions` (the caller chose them by {@link supervisorsToRemove}). */
export async function removeSupervisors(
  paths: InstallPaths,
  versions: readonly string[],
): Promise<void> {
  for (const version of versions) {
    if (version === "" || version.includes("/") || version === "." || version === "..") continue;
    await rm(join(paths.supervisors, version), { recursive: true, force: true });
  }
  if (versions.length > 0) await syncDirectory(paths.supervisors);
}
