/**
 * A Connect transport wrapper that bounds every call by agentctl's timeout, so a server that
 * accepts a connection and never answers cannot hang the CLI. A unary call must complete
 * within the timeout; a server stream (`campaign watch`) must begin (response headers)
 * within it and may then run as long as the server keeps it open.
 */
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { describeTimeout } from "./timeout.js";

function deadlineError(timeoutMs: number): ConnectError {
  return new ConnectError(
    `no answer within ${describeTimeout(timeoutMs)} (raise --timeout to wait longer)`,
    Code.DeadlineExceeded,
  );
}

/** Wraps `transport` so that calls without their own timeout get `timeoutMs`. */
export function withDeadline(transport: Transport, timeoutMs: number): Transport {
  return {
    async unary(method, signal, ownTimeout, header, input, contextValues) {
      try {
        return await transport.unary(
          method,
          signal,
          ownTimeout ?? timeoutMs,
          header,
          input,
          contextValues,
        );
      } catch (error) {
        if (ownTimeout === undefined && ConnectError.from(error).code === Code.DeadlineExceeded) {
          throw deadlineError(timeoutMs);
        }
        throw error;
      }
    },
    async stream(method, signal, ownTimeout, header, input, contextValues) {
      if (ownTimeout !== undefined) {
        return await transport.stream(method, signal, ownTimeout, header, input, contextValues);
      }
      const bounded = new AbortController();
      const forward = () => bounded.abort(signal?.reason);
      if (signal?.aborted) forward();
      signal?.addEventListener("abort", forward, { once: true });
      const timer = setTimeout(() => bounded.abort(deadlineError(timeoutMs)), timeoutMs);
      try {
        return await transport.stream(
          method,
          bounded.signal,
          undefined,
          header,
          input,
          contextValues,
        );
      } catch (error) {
        if (bounded.signal.reason instanceof ConnectError && !signal?.aborted) {
          throw bounded.signal.reason;
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
