/**
 * Where the dashboard keeps the admin token: in this tab's sessionStorage only (gone when the
 * tab closes, never in a cookie, so no request carries it unless the code adds it). A token
 * may arrive in the URL fragment (`/ui/#token=…`), which browsers never send to a server; it
 * is then taken out of the address bar and the history at once.
 */

import { fragmentToken } from "./token-fragment.js";

const STORAGE_KEY = "agent-control.admin-token";

/**
 * Takes a token from `#token=…`, stores it, and replaces the address with the same one
 * without the token (no history entry holds it). What follows the token after `&` is the page
 * the link names (`#token=…&/fleet` opens the Fleet page), kept as the fragment.
 * @returns the token, or undefined when the fragment holds none
 */
export function takeTokenFromFragment(
  location: Location = window.location,
  history: History = window.history,
): string | undefined {
  const found = fragmentToken(location.hash);
  if (!found) return undefined;
  history.replaceState(history.state, "", `${location.pathname}${location.search}${found.rest}`);
  const token = found.token;
  if (token === "") return undefined;
  saveToken(token);
  return token;
}

/** The token saved in this tab, if any. */
export function savedToken(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

/** Keeps `token` for this tab. */
export function saveToken(token: string): void {
  sessionStorage.setItem(STORAGE_KEY, token);
}

/** Forgets the token of this tab (sign out, or a token Control refused). */
export function forgetToken(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
