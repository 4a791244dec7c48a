/**
 * The admin API's error funnel: every failure of an admin call, thrown by its handler or
 * midway through a server stream, leaves as the client-safe ConnectError of
 * {@link toConnectError}; every failure that reaches the client as `internal` (or
 * `unknown`) is logged here, once, with its cause and the method that failed, whatever
 * shape it had (an Error of Control's code, a ConnectError of a library, a ControlError
 * whose code is `internal`). Refusals that the client is told about in full are not faults
 * and are not logged.
 */
import { Code, type ConnectError, type Interceptor } from "@connectrpc/connect";
import { toConnectError } from "../errors.js";
import type { Logger } from "../log.js";

/** The interceptor that maps and logs the errors of every admin call. */
export function errorFunnel(log: Logger): Interceptor {
  return (next) => async (req) => {
    const funnel = (error: unknown): ConnectError => {
      const mapped = toConnectError(error);
      if (mapped.code === Code.Internal || mapped.code === Code.Unknown) {
        log.error({ err: error, method: req.method.name }, "admin call failed");
      }
      return mapped;
    };
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (error) {
      throw funnel(error);
    }
    if (!res.stream) return res;
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* messages;
        } catch (error) {
          throw funnel(error);
        }
      })(),
    };
  };
}
