/**
 * What the Agent takes from a Welcome, and what it refuses: a Welcome comes from whatever
 * answered on Control's address, so its node token is checked before it is kept. Pure.
 */

/** The longest node token the Agent keeps (Control's own are a few dozen characters). */
export const MAX_NODE_TOKEN_CHARS = 4096;

/** Visible ASCII only: what travels as `authorization: Bearer <token>` unchanged. */
const HEADER_TOKEN = /^[\x21-\x7E]+$/;

/**
 * Why `token` cannot be a node token, or undefined when it can: it must be 1 to
 * {@link MAX_NODE_TOKEN_CHARS} visible ASCII characters, so it can always be sent as a header
 * (a newline in it would make every later connect throw, and would inject a header).
 */
export function nodeTokenRefusal(token: string): string | undefined {
  if (token.length > MAX_NODE_TOKEN_CHARS) {
    return `the node token is ${token.length} characters long, over ${MAX_NODE_TOKEN_CHARS}`;
  }
  if (!HEADER_TOKEN.test(token)) {
    return "the node token holds characters a header value cannot (only visible ASCII is allowed)";
  }
  return undefined;
}

/** What to do with a Welcome's node token. */
export type WelcomedToken =
  | { readonly kind: "none" }
  | { readonly kind: "take"; readonly token: string }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * The verdict on the node token `offered` by a Welcome on a stream that was `enrolling` (opened
 * with the join token) while the node held `current`. A token is taken only on an enrollment
 * stream (SPEC §2: `node_token` only when the stream enrolled with a join token) and only when
 * {@link nodeTokenRefusal} has nothing against it; an absent token, or the one already held,
 * changes nothing.
 */
export function welcomedNodeToken(
  offered: string,
  stream: { readonly enrolling: boolean; readonly current: string | undefined },
): WelcomedToken {
  if (offered === "" || offered === stream.current) return { kind: "none" };
  if (!stream.enrolling) {
    return {
      kind: "refused",
      reason: "a Welcome on a stream opened with the node token carries no new node token",
    };
  }
  const refusal = nodeTokenRefusal(offered);
  return refusal === undefined
    ? { kind: "take", token: offered }
    : { kind: "refused", reason: refusal };
}
