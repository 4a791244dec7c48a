/**
 * The Agent's flags that decide whom it trusts: the TUF root and metadata URL, the origins
 * that may receive its node token, and whether a server counts as loopback (where clear text
 * needs no `--insecure`). Each throws one line naming its flag.
 */
import { readFileSync } from "node:fs";
import { MetadataKind } from "@tufjs/models";
import { parseMetadata } from "../control/shared/tuf/repository.js";

/** `--tuf-root` and `--tuf-url`, both or neither; the root must parse as TUF root metadata. */
export function tufOptions(
  root: string | undefined,
  url: string | undefined,
): { readonly root: string; readonly url: string } | undefined {
  if (root === undefined && url === undefined) return undefined;
  if (root === undefined || url === undefined) {
    throw new Error(
      "--tuf-root and --tuf-url go together (the trusted root and where metadata is)",
    );
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new Error(`--tuf-url must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
  try {
    parseMetadata(MetadataKind.Root, readFileSync(root));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `--tuf-root ${JSON.stringify(root)} ${code !== undefined ? `cannot be read (${code})` : (error as Error).message}`,
    );
  }
  return { root, url };
}

/** Whether `host` (an IP literal or a name) is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * `--download-origins`: scheme://host[:port] origins, normalised as `URL.origin` writes them.
 * The node token goes to each of them, so an `http://` origin off loopback is clear text on
 * the path and needs `insecure` (`--insecure`), as the stream does.
 */
export function downloadOrigins(text: string | undefined, insecure = false): string[] {
  return originList(text, "--download-origins", (url, item) => {
    if (url.protocol === "http:" && !insecure && !isLoopbackHost(url.hostname)) {
      throw new Error(
        `--download-origins ${JSON.stringify(item)} is clear text off loopback and would carry the node token: use https:// or --insecure`,
      );
    }
  });
}

/**
 * `--artifact-mirrors`: scheme://host[:port] origins artifacts may also be fetched from. They
 * never receive the node token, and every artifact is checked against its signed size and
 * sha256, so `http://` is accepted anywhere.
 */
export function artifactMirrors(text: string | undefined): string[] {
  return originList(text, "--artifact-mirrors", () => {});
}

function originList(
  text: string | undefined,
  flag: string,
  check: (url: URL, item: string) => void,
): string[] {
  if (text === undefined) return [];
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => {
      let url: URL | undefined;
      try {
        url = new URL(item);
      } catch {
        url = undefined;
      }
      if (
        url === undefined ||
        (url.protocol !== "http:" && url.protocol !== "https:") ||
        (url.pathname !== "/" && url.pathname !== "") ||
        url.search !== "" ||
        url.username !== ""
      ) {
        throw new Error(`${flag} takes scheme://host[:port] origins, got ${JSON.stringify(item)}`);
      }
      check(url, item);
      return url.origin;
    });
}
