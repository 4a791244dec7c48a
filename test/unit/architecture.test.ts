import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The shape of control/, made executable: no import cycles, the pure campaign engine imports
// nothing of the shell, and no folder imports one above it. Imports are read with regular
// expressions (static `import … from`, `export … from`, side-effect `import "…"` and `import("…")`),
// type-only imports included: a cycle through types is still a cycle to untangle.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CONTROL = join(ROOT, "control");

interface Import {
  /** The importing file, relative to the repository root, with forward slashes. */
  readonly from: string;
  /** The specifier as written. */
  readonly specifier: string;
  /** The file it resolves to, relative to the repository root; undefined for a package. */
  readonly to: string | undefined;
}

const STATIC_IMPORT =
  /^\s*(?:import|export)\s+(?:type\s+)?[\w*${}\s,]*?\s*from\s*["']([^"']+)["']/gm;
const SIDE_EFFECT_IMPORT = /^\s*import\s*["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

function toPosix(path: string): string {
  return path.split(sep).join("/");
}

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (toPosix(relative(ROOT, path)).endsWith("proto/gen")) continue;
      files.push(...sourceFiles(path));
    } else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) {
      files.push(path);
    }
  }
  return files.sort();
}

function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [
    base.replace(/\.js$/, ".ts"),
    base,
    `${base}.ts`,
    join(base, "index.ts"),
    base.replace(/\.js$/, ".d.ts"),
  ];
  const found = candidates.find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
  return toPosix(relative(ROOT, found ?? base));
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const from = toPosix(relative(ROOT, file));
  const specifiers = new Set<string>();
  for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT, DYNAMIC_IMPORT]) {
    for (const match of text.matchAll(pattern)) specifiers.add(match[1]!);
  }
  return [...specifiers].map((specifier) => ({
    from,
    specifier,
    to: resolveSpecifier(file, specifier),
  }));
}

const files = sourceFiles(CONTROL);
const imports = files.flatMap(importsOf);
const controlImports = imports;

function under(path: string | undefined, ...folders: string[]): boolean {
  return path !== undefined && folders.some((folder) => path.startsWith(`${folder}/`));
}

function describeImport(entry: Import): string {
  return `${entry.from} imports "${entry.specifier}"${entry.to ? ` (${entry.to})` : ""}`;
}

function offending(
  importers: (from: string) => boolean,
  forbidden: (entry: Import) => boolean,
): string[] {
  return imports.filter((entry) => importers(entry.from) && forbidden(entry)).map(describeImport);
}

/**
 * One cycle per strongly connected component of the import graph of `imports` (default:
 * control/'s), as a path a → b → … → a.
 */
function importCycles(imports: readonly Import[] = controlImports): string[][] {
  const graph = new Map<string, string[]>();
  for (const entry of imports) {
    if (entry.to === undefined) continue;
    const edges = graph.get(entry.from) ?? [];
    if (!edges.includes(entry.to)) edges.push(entry.to);
    graph.set(entry.from, edges);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = (graph.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);

  // The shortest way from a component's first file back to itself, staying inside the component.
  return components.map((component) => {
    const members = new Set(component);
    const start = component[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const node = queue.shift()!;
      for (const target of graph.get(node) ?? []) {
        if (!members.has(target)) continue;
        if (target === start) {
          const path = [node];
          while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
          return [...path, start];
        }
        if (!previous.has(target)) {
          previous.set(target, node);
          queue.push(target);
        }
      }
    }
    return [...component, start];
  });
}

describe("The architecture of control/", () => {
  it("reads the imports of every file under control/", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(imports.some((entry) => entry.from === "control/main.ts")).toBe(true);
  });

  it("has no import cycle", () => {
    const cycles = importCycles().map((cycle) => `import cycle: ${cycle.join(" → ")}`);
    expect(cycles, cycles.join("\n")).toEqual([]);
  });

  it("keeps the campaign engine pure: control/campaign imports only itself and control/shared", () => {
    const found = offending(
      (from) => under(from, "control/campaign"),
      (entry) => entry.to !== undefined && !under(entry.to, "control/campaign", "control/shared"),
    );
    expect(found, found.join("\n")).toEqual([]);
  });

  it("never imports the agent simulator, the CLI, the simulation or the tests from control/", () => {
    const found = offending(
      () => true,
      (entry) => under(entry.to, "agent-sim", "cli", "simulation", "test"),
    );
    expect(found, found.join("\n")).toEqual([]);
  });

  it("keeps the campaign store and the campaign worker below the admin services", () => {
    const found = offending(
      (from) => under(from, "control/campaign-store", "control/campaign-worker"),
      (entry) => under(entry.to, "control/admin"),
    );
    expect(found, found.join("\n")).toEqual([]);
  });

  it("keeps the admin services on the campaign store's surface, off the worker's internals", () => {
    const found = offending(
      (from) => under(from, "control/admin"),
      (entry) => under(entry.to, "control/campaign-worker"),
    );
    expect(found, found.join("\n")).toEqual([]);
  });

  it("sends every error a client sees through the one error table: no ConnectError made outside control/errors.ts", () => {
    const found = files
      .map((file) => toPosix(relative(ROOT, file)))
      .filter((file) => file !== "control/errors.ts")
      .filter((file) => /\bnew ConnectError\(/.test(readFileSync(join(ROOT, file), "utf8")));
    expect(found, found.join("\n")).toEqual([]);
  });

  it("judges admin tokens' expiry on Control's clock: no default to the wall clock in the admin API", () => {
    const found = files
      .map((file) => toPosix(relative(ROOT, file)))
      .filter((file) => under(file, "control/admin"))
      .filter((file) => /=\s*new Date\(\)/.test(readFileSync(join(ROOT, file), "utf8")));
    expect(found, found.join("\n")).toEqual([]);
  });

  it("keeps releases and TLS below the admin services and the agent servers", () => {
    const found = offending(
      (from) => under(from, "control/releases", "control/tls"),
      (entry) => under(entry.to, "control/admin", "control/agents"),
    );
    expect(found, found.join("\n")).toEqual([]);
  });
});

describe("The architecture of simulation/", () => {
  const simulationFiles = sourceFiles(join(ROOT, "simulation"));
  const simulationImports = simulationFiles.flatMap(importsOf);

  it("reads the imports of every file under simulation/", () => {
    expect(simulationFiles.length).toBeGreaterThan(50);
    expect(simulationImports.some((entry) => entry.from === "simulation/run.ts")).toBe(true);
  });

  it("has no import cycle (the world imports no registered unit: the generator composes them)", () => {
    const cycles = importCycles(simulationImports).map(
      (cycle) => `import cycle: ${cycle.join(" → ")}`,
    );
    expect(cycles, cycles.join("\n")).toEqual([]);
  });
});
