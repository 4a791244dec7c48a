/**
 * Where Control's package lives: the nearest folder above a module that holds the
 * `package.json` named `agent-control`. A module finds the repository's files (the dashboard's
 * `ui/` sources, the package's version) through it the same way whether it runs from its
 * source (`control/ui/bundle.ts`, two folders down) or from the bundle `npm run build` writes
 * (`dist/control.mjs`, one folder down).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's name in its `package.json`. */
const NAME = "agent-control";

/**
 * The folder of Control's `package.json`, searched upwards from `moduleUrl` (a module's
 * `import.meta.url`); undefined when no folder above it holds it.
 */
export function packageRoot(moduleUrl: string): string | undefined {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      try {
        if ((JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === NAME)
          return dir;
      } catch {
        // Not a readable package.json: look further up.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
