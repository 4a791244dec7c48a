/**
 * The store adapters derive every node-state rule from the engine's traits table
 * (`NODE_STATE_TRAITS`, control/campaign/node-state-traits.ts; SQL through
 * `sql/node-state-sql.ts`): none names a node state of its own. A quoted node state in any of
 * their files is a list or a rule written a second time, which the traits would not update.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { NODE_STATES } from "../../../control/campaign/index.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const STORE = join(ROOT, "control/campaign-store");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** Every quoted node state (`'x'`, `"x"` or `` `x` ``) in `text`, with its line. */
function quotedStates(text: string): { line: number; state: string }[] {
  const pattern = new RegExp(`(["'\`])(${NODE_STATES.join("|")})\\1`, "g");
  const out: { line: number; state: string }[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    for (const m of line.matchAll(pattern)) out.push({ line: i + 1, state: m[2] as string });
  }
  return out;
}

describe("the campaign store adapters", () => {
  it("finds a quoted node state in SQL and in TypeScript (the check itself)", () => {
    expect(
      quotedStates("where state in ('offered', 'applying')\nif (s === \"rolling_back\")"),
    ).toEqual([
      { line: 1, state: "offered" },
      { line: 1, state: "applying" },
      { line: 2, state: "rolling_back" },
    ]);
    expect(quotedStates("the rolling back nodes; state_offered")).toEqual([]);
  });

  it("name no node state of their own: every list and SQL fragment is derived from the traits", () => {
    const files = sourceFiles(STORE);
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((file) =>
      quotedStates(readFileSync(file, "utf8")).map(
        ({ line, state }) => `${relative(ROOT, file)}:${line}: '${state}'`,
      ),
    );
    expect(found).toEqual([]);
  });
});
