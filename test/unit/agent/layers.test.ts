/**
 * The Agent's layering, made executable: the protocol core imports nothing of the real
 * Agent, the simulator or the CLI; the real Agent imports nothing of the simulator; Control
 * imports nothing of either (shared code lives in control/shared).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?[\w*${}\s,]*?\s*from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/gm;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** `file → imported file` pairs (relative to the root) of the .ts files under `dir`. */
function imports(dir: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const file of files(join(ROOT, dir))) {
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? "";
      if (!specifier.startsWith(".")) continue;
      pairs.push([relative(ROOT, file), relative(ROOT, resolve(dirname(file), specifier))]);
    }
  }
  return pairs;
}

const under = (path: string, ...dirs: string[]) => dirs.some((d) => path.startsWith(`${d}/`));

describe("the Agent's layers", () => {
  it("the protocol core imports only itself, control/shared and the generated protocol", () => {
    expect(imports("agent/core").length).toBeGreaterThan(10);
    const outside = imports("agent/core").filter(
      ([, to]) => !under(to, "agent/core", "control/shared", "proto/gen"),
    );
    expect(outside).toEqual([]);
  });

  it("the real Agent imports nothing of the simulator, the CLI or Control beyond control/shared", () => {
    const outside = imports("agent").filter(
      ([, to]) =>
        under(to, "agent-sim", "cli", "simulation", "test") ||
        (under(to, "control") && !under(to, "control/shared")),
    );
    expect(outside).toEqual([]);
  });

  it("Control imports nothing of the Agent", () => {
    expect(imports("control").filter(([, to]) => under(to, "agent"))).toEqual([]);
  });
});
