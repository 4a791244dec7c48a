/**
 * What a credential sent in an `authorization: Bearer …` header may be. One rule for every
 * place a token enters a program: Control's admin tokens (config, env, tokens file), the
 * simulator's join token and agentctl's `--token`. A token outside it could never be sent
 * (HTTP/2 and grpc-js refuse such a header value, and `Bearer <token>` is split at
 * whitespace), so it is refused where it is read, naming where it came from.
 */

/** Visible ASCII (0x21–0x7E): no space, no control character, no newline, nothing else. */
const HEADER_TOKEN = /^[\x21-\x7e]+$/;

/** The rule, as the one-line messages state it. */
export const HEADER_TOKEN_RULE = "must be printable ASCII without spaces or newlines";

/** True for a non-empty string that can be sent as `authorization: Bearer <token>`. */
export function isHeaderToken(token: string): boolean {
  return HEADER_TOKEN.test(token);
}
