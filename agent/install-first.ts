/**
 * The first install: an install directory without a `current` link gets the running code
 * as its first version (the artifact this process runs from: the `.mjs` file, or the
 * binary of a single executable; run from source, an ES module artifact built on the spot), a fresh state naming the node, and the link. Each step is
 * durable before the next, and a directory left half-way by a crash is completed.
 */
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { fileURLToPath } from "node:url";
import { initialState, loadState, saveState } from "./agent-state.js";
import { BUILD_VERSION } from "./build-version.js";
import { bundleAgent } from "./bundle.js";
import {
  type InstallPaths,
  installedArtifact,
  installVersion,
  readCurrent,
  switchCurrent,
} from "./install-dir.js";

/** The version a source checkout installs as (package.json's). */
async function sourceVersion(): Promise<string> {
  const file = fileURLToPath(new URL("../package.json", import.meta.url));
  return (JSON.parse(await readFile(file, "utf8")) as { version: string }).version;
}

/**
 * Makes sure `paths` holds an installed Agent; returns the version it installed, or
 * undefined when one was there already.
 */
export async function ensureInstalled(
  paths: InstallPaths,
  nodeId: string | undefined,
  platform: string,
): Promise<string | undefined> {
  if ((await readCurrent(paths)) !== undefined) return undefined;
  const saved = await loadState(paths);
  if (saved !== undefined && (await installedArtifact(paths, saved.version)) !== undefined) {
    await switchCurrent(paths, saved.version);
    return saved.version;
  }
  const version = BUILD_VERSION ?? (await sourceVersion());
  const bytes =
    BUILD_VERSION !== undefined
      ? await readFile(fileURLToPath(import.meta.url))
      : await bundleAgent({ version, platform });
  await installVersion(paths, version, bytes);
  await saveState(paths, saved ?? initialState(nodeId ?? defaultNodeId(), version));
  await switchCurrent(paths, version);
  return version;
}

/** The node id of a new install without `--node-id`: the host name, made acceptable. */
function defaultNodeId(): string {
  return (
    hostname()
      .replace(/[^A-Za-z0-9._:-]/g, "-")
      .slice(0, 128) || "agent"
  );
}
