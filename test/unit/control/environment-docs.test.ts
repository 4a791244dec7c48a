import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_ENV } from "../../../control/config.js";
import { USAGE } from "../../../control/usage.js";

// Every AGENT_CONTROL_* variable named anywhere in Control's source is one Control reads: each
// must be in `npm start -- --help` and, written out in full, in README.md's table.
const ROOT = resolve(import.meta.dirname, "../../..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

const named = [
  ...new Set(
    sources(join(ROOT, "control")).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\bAGENT_CONTROL_[A-Z0-9_]*[A-Z0-9]\b/g)].map(
        (match) => match[0],
      ),
    ),
  ),
  "DATABASE_URL",
].sort();
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

describe("The environment variables Control reads are all documented", () => {
  it("finds the variables in the source", () => {
    expect(named).toContain("AGENT_CONTROL_LOG_LEVEL");
    expect(named.length).toBeGreaterThan(20);
  });

  it("names exactly the variables the config reads", () => {
    expect(named).toEqual([...CONFIG_ENV].sort());
  });

  it.each(named)("npm start -- --help lists %s", (name) => {
    expect(USAGE).toMatch(new RegExp(`^  ${name} `, "m"));
  });

  it.each(named)("README.md's configuration table lists %s", (name) => {
    expect(readme).toMatch(new RegExp(`^\\| [^\\n]*\`${name}\``, "m"));
  });
});
