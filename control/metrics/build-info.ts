/** What `agent_control_build_info` says: this Control's version and its Node.js runtime. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../shared/package-root.js";

/** The labels of `agent_control_build_info`. */
export interface BuildInfo {
  /** The `version` of Control's package.json, or `unknown` when it cannot be read. */
  readonly version: string;
  /** `process.version` without its leading `v`. */
  readonly nodeVersion: string;
}

/** Reads the build's facts once per call (at Control's start). */
export function buildInfo(): BuildInfo {
  return { version: packageVersion(), nodeVersion: process.version.replace(/^v/, "") };
}

function packageVersion(): string {
  try {
    // From the source (control/metrics/) or the bundle (dist/): the package's own file.
    const root = packageRoot(import.meta.url);
    if (root === undefined) return "unknown";
    const text = readFileSync(join(root, "package.json"), "utf8");
    const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" && version !== "" ? version : "unknown";
  } catch {
    return "unknown";
  }
}
