/**
 * Nothing in the campaign engine, its worker or its stores grows the call stack with the size
 * of a list: no argument list is spread from an array (`Math.min(...times)`, `push(...ids)`
 * overflow the stack near 130,000 elements), and no function calls itself. Read from the
 * TypeScript syntax tree of every source file.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const DIRS = ["control/campaign", "control/campaign-worker", "control/campaign-store"];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** `file:line: text` of each spread argument and each self-call in `path`. */
function stackHazards(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  const where = (n: ts.Node) =>
    `${relative(ROOT, path)}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${n.getText().slice(0, 60)}`;
  // The enclosing named function or method: a function calls itself by its name, a method
  // through `this` (a bare call in a method names something else in scope).
  const enclosing: { name: string; method: boolean }[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isSpreadElement(n) && (ts.isCallExpression(n.parent) || ts.isNewExpression(n.parent)))
      out.push(where(n.parent));
    const named =
      (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name !== undefined
        ? { name: n.name.getText(), method: ts.isMethodDeclaration(n) }
        : undefined;
    if (named !== undefined) enclosing.push(named);
    const inside = enclosing.at(-1);
    if (ts.isCallExpression(n) && inside !== undefined) {
      const callee = n.expression;
      const self = inside.method
        ? ts.isPropertyAccessExpression(callee) &&
          callee.expression.kind === ts.SyntaxKind.ThisKeyword &&
          callee.name.text === inside.name
        : ts.isIdentifier(callee) && callee.text === inside.name;
      if (self) out.push(where(n));
    }
    ts.forEachChild(n, visit);
    if (named !== undefined) enclosing.pop();
  };
  visit(source);
  return out;
}

describe("the engine's stack depth does not grow with the fleet", () => {
  it("spreads no list into an argument list and has no recursive function", () => {
    const hazards = DIRS.flatMap((d) => sourceFiles(join(ROOT, d))).flatMap(stackHazards);
    expect(hazards).toEqual([]);
  });

  it("finds a spread argument and a self-call where there is one", () => {
    const probe = join(ROOT, "test/unit/campaign/stack-depth.probe.txt");
    expect(stackHazards(probe).map((h) => h.replace(/^[^:]+:\d+: /, ""))).toEqual([
      "Math.min(...times)",
      "walk(rest)",
      "this.depth(list.slice(1))",
    ]);
  });
});
