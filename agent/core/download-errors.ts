/**
 * What a download's network error says: fetch reports every one as "fetch failed" and keeps
 * the socket's error (`ECONNRESET`, `UND_ERR_SOCKET` "other side closed", …) as its `cause`.
 */

/** Socket errors of a connection the server closed or reset: the request may be sent again. */
const CONNECTION_LOST = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

function causeOf(error: unknown): { code?: unknown; message?: unknown } | undefined {
  if (!(error instanceof Error)) return undefined;
  const cause = error.cause;
  return cause !== null && typeof cause === "object" ? (cause as { code?: unknown }) : undefined;
}

/** The error's message with its cause's code and message, which an operator needs to read. */
export function networkReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = causeOf(error);
  if (cause === undefined) return message;
  const detail = [cause.code, cause.message]
    .filter((part): part is string => typeof part === "string" && part !== "")
    .join(" ");
  return detail === "" ? message : `${message} (${detail})`;
}

/**
 * True when the error is the connection being closed or reset under the request, as when an
 * HTTP/1.1 server closes a kept-alive connection just as the client sends on it; false for a
 * refused connection, a name that does not resolve, TLS or anything else.
 */
export function connectionLost(error: unknown): boolean {
  const code = causeOf(error)?.code;
  return typeof code === "string" && CONNECTION_LOST.has(code);
}
