/**
 * The self time of the hottest functions in a V8 CPU profile (`.cpuprofile`), for the
 * diagnosis tools: one line per function, share of all samples first.
 */
import { readFile } from "node:fs/promises";

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
}

/** Prints the `top` functions of the profile in `file` by self time; `label` heads the list. */
export async function printProfileSummary(file: string, label: string, top = 45): Promise<void> {
  const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame;
    const url = frame?.url.replace(/^.*node_modules\//, "").replace(/^.*\/main\//, "") ?? "";
    const key = `${frame?.functionName || "(anonymous)"} ${url}:${frame?.lineNumber ?? 0}`;
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  const total = profile.samples.length;
  process.stdout.write(`${total} samples ${label}\n`);
  for (const [key, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${key}\n`);
  }
}
