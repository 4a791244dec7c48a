/**
 * How the supervisor starts an installed artifact: a single executable runs directly, an ES
 * module runs with a Node.js binary (the one running the supervisor, or, when the
 * supervisor is itself a single executable, the `node` found on the PATH).
 */
import { isSea } from "node:sea";
import type { InstalledArtifact } from "./install-dir.js";

/** A program and its arguments, as `spawn` takes them. */
export interface ChildCommand {
  readonly file: string;
  readonly args: readonly string[];
}

/**
 * The Node.js that runs ES module artifacts for this process: its own binary when it is
 * Node.js, `node` from the PATH when it is a single executable (whose binary runs only the
 * script built into it).
 */
export function defaultModuleRunner(): string {
  return isSea() ? "node" : process.execPath;
}

/** The command that starts `artifact` with `args`, modules run by `moduleRunner`. */
export function childCommand(
  artifact: InstalledArtifact,
  args: readonly string[],
  moduleRunner: string,
): ChildCommand {
  switch (artifact.kind) {
    case "executable":
      return { file: artifact.path, args };
    case "module":
      return { file: moduleRunner, args: [artifact.path, ...args] };
  }
}
