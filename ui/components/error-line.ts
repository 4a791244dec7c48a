/**
 * A failed call, as one line on the page. A refused token (unknown or expired) signs out,
 * since no later call would succeed either.
 */
import { html } from "htm/preact";
import { useEffect } from "preact/hooks";
import { describeError, isUnauthenticated } from "../api.js";
import { useSession } from "../session.js";

/** Shows `error` when there is one; nothing otherwise. */
export function ErrorLine({ error }: { error: unknown }) {
  const { signOut } = useSession();
  const refused = error !== undefined && isUnauthenticated(error);
  useEffect(() => {
    if (refused) signOut(`Control refused the token: ${describeError(error)}`);
  }, [refused]);
  if (error === undefined) return null;
  return html`<p class="error" role="alert">${describeError(error)}</p>`;
}
