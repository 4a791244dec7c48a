/**
 * agentctl's own version: fixed at bundle time (esbuild `define`), else read from the
 * package.json next to the sources (running from a checkout through tsx).
 */
import { readFileSync } from "node:fs";

declare const __AGENTCTL_VERSION__: string | undefined;

/** agentctl's version, or `unknown` when neither the bundle nor package.json says. */
export function clientVersion(): string {
  if (typeof __AGENTCTL_VERSION__ === "string") return __AGENTCTL_VERSION__;
  try {
    const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
    const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === "string" && version !== "" ? version : "unknown";
  } catch {
    return "unknown";
  }
}
