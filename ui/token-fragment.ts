/**
 * What a dashboard link's URL fragment carries: `#token=…` (the admin token, URL-encoded),
 * optionally followed by `&` and the page it opens (`#token=…&/fleet`). Pure, so it is tested
 * without a browser.
 */

const FRAGMENT = /^#token=([^&]*)(?:&(.*))?$/;

/** The token of a fragment and the fragment that remains (the page), or undefined. */
export interface FragmentToken {
  /** The token, decoded and trimmed; empty when the fragment held an empty one. */
  readonly token: string;
  /** The fragment to leave in the address: `#/fleet`, or "" when the link named no page. */
  readonly rest: string;
}

/** Reads `#token=…[&PAGE]`; undefined when `hash` holds no token. */
export function fragmentToken(hash: string): FragmentToken | undefined {
  const match = FRAGMENT.exec(hash);
  if (!match) return undefined;
  return {
    token: decodeURIComponent(match[1] ?? "").trim(),
    rest: match[2] ? `#${match[2]}` : "",
  };
}
