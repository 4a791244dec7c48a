/**
 * Debian's Chromium driven by playwright-core, as the dashboard's browser tests launch it: a
 * fresh profile, headless, nothing fetched from the network but the page under test.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium } from "playwright-core";

/** Debian's Chromium, which `npm test`'s set-up installs. */
export const CHROMIUM = "/usr/bin/chromium";
/** Where the browser tests write the screenshots the README shows. */
export const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs/img");

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A browser with its own profile; `close` ends it and removes the profile. */
export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh profile.
 * @throws Error naming the missing binary and how to install it
 */
export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  }
  const profile = await mkdtemp(join(tmpdir(), "agent-control-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
