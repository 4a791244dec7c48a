/**
 * What an admin request must pass before Control reads a byte of its body: the bearer token
 * and role, checked on the headers alone, and a body limit that fits the RPC, checked on the
 * declared length and again on every byte that arrives, within a budget of body bytes shared
 * by all requests. A refused request is answered in the protocol its client speaks (Connect,
 * gRPC, gRPC-Web) and its body is left unread: over HTTP/1.1 the connection is closed after
 * the answer instead of being drained (the admin server closes an HTTP/2 stream the same way).
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type {
  UniversalHandler,
  UniversalServerRequest,
  UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import type { Clock } from "../clock.js";
import { ControlError, toConnectError } from "../errors.js";
import { authenticate, authorizeCall, peerKey, type TokenEntry } from "./auth.js";
import type { AuthFailure } from "./auth-failures.js";

/** Byte limits of admin request bodies (what arrives on the wire, and each decoded message). */
export interface BodyLimits {
  /** The largest body of every RPC except those in {@link LARGE_BODY_METHODS}. */
  readonly requestBytes: number;
  /** The largest body of `RegisterRelease`: the envelope and the artifact files. */
  readonly releaseBytes: number;
  /** Body bytes all admin requests together may hold while they are read. */
  readonly bytesInFlight: number;
  /** A body must have arrived this long after its headers. */
  readonly bodyTimeoutMs: number;
}

/** RPCs whose bodies may be large (operators only): `Service/Method` → which limit. */
export const LARGE_BODY_METHODS: Readonly<Record<string, "releaseBytes">> = {
  "agentcontrol.admin.v1.ReleaseService/RegisterRelease": "releaseBytes",
};

/** Why the guard refused a request, for metrics. */
export type Refusal = "unauthenticated" | "permission_denied" | "too_large" | "busy" | "slow_body";

/** The body limit of `method` (`Service/Method`). */
export function bodyLimitOf(method: string, limits: BodyLimits): number {
  const large = LARGE_BODY_METHODS[method];
  return large ? limits[large] : limits.requestBytes;
}

function methodKey(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/**
 * A router that registers every RPC with its own `readMaxBytes` ({@link bodyLimitOf}), so
 * connect-es also bounds a decompressed body and each gRPC message by the RPC's limit, not
 * by the largest one.
 */
export function withBodyLimits(router: ConnectRouter, limits: BodyLimits): ConnectRouter {
  const limited: ConnectRouter = {
    get handlers() {
      return router.handlers;
    },
    service(service, implementation, options) {
      registerService(router, service, implementation as Record<string, unknown>, options, limits);
      return limited;
    },
    rpc(method, impl, options) {
      router.rpc(method, impl, {
        ...options,
        readMaxBytes: bodyLimitOf(methodKey(method), limits),
      });
      return limited;
    },
  };
  return limited;
}

function registerService(
  router: ConnectRouter,
  service: DescService,
  implementation: Record<string, unknown>,
  options: Parameters<ConnectRouter["service"]>[2],
  limits: BodyLimits,
): void {
  for (const method of service.methods) {
    const fn = implementation[method.localName];
    const impl =
      typeof fn === "function"
        ? fn.bind(implementation)
        : () => {
            throw toConnectError(
              new ControlError(
                "unimplemented",
                `${service.typeName}.${method.name} is not implemented`,
              ),
            );
          };
    router.rpc(method, impl as never, {
      ...options,
      readMaxBytes: bodyLimitOf(methodKey(method), limits),
    });
  }
}

/** Options of {@link guardRequests}. */
export interface GuardOptions {
  readonly tokens: readonly TokenEntry[];
  /** Whose time judges a token's expiry. */
  readonly clock: Clock;
  readonly limits: BodyLimits;
  readonly onRefused?: (reason: Refusal) => void;
  /**
   * Told of each call refused as unauthenticated (no, unknown or expired token), and of each
   * refused because the token's role may not call it (`deniedTo`: the token's name).
   */
  readonly onAuthFailure?: (failure: AuthFailure) => void;
}

/**
 * Wraps every handler of `router` (call it after all routes are registered) so that each
 * request is authorised on its headers and its body is metered before connect-es reads it.
 */
export function guardRequests(router: ConnectRouter, options: GuardOptions): void {
  const budget = byteBudget(options.limits.bytesInFlight);
  router.handlers.forEach((handler, index) => {
    const guarded = (req: UniversalServerRequest) => guard(handler, req, options, budget);
    router.handlers[index] = Object.assign(guarded, handler);
  });
}

/**
 * The name of the token a request authenticated with, for a call refused for its role (which
 * authenticated it a moment ago); "unknown" if it no longer authenticates.
 */
function tokenName(req: UniversalServerRequest, options: GuardOptions): string {
  try {
    const authorization = req.header.get("authorization") ?? undefined;
    return authenticate(authorization, options.tokens, options.clock.now()).name;
  } catch {
    return "unknown";
  }
}

interface ByteBudget {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

function byteBudget(capacity: number): ByteBudget {
  let used = 0;
  return {
    take(bytes) {
      if (used + bytes > capacity) return false;
      used += bytes;
      return true;
    },
    give(bytes) {
      used -= bytes;
    },
  };
}

/** One request's body as the guard sees it. */
interface Meter {
  /** Bytes taken from the shared budget, given back when the handler answers. */
  reserved: number;
  /** Whether bytes still arriving take from the budget (not once the handler answered). */
  reserving: boolean;
  received: number;
  /** The body was read to its end. */
  finished: boolean;
  refusal: Refusal | undefined;
}

async function guard(
  handler: UniversalHandler,
  req: UniversalServerRequest,
  options: GuardOptions,
  budget: ByteBudget,
): Promise<UniversalServerResponse> {
  const method = methodKey(handler.method);
  const limit = bodyLimitOf(method, options.limits);
  const meter: Meter = {
    reserved: 0,
    reserving: true,
    received: 0,
    finished: false,
    refusal: undefined,
  };
  let error: ConnectError | undefined;
  try {
    authorizeCall(
      method,
      req.header.get("authorization") ?? undefined,
      options.tokens,
      options.clock.now(),
    );
  } catch (caught) {
    error = ConnectError.from(caught);
    meter.refusal = error.code === Code.PermissionDenied ? "permission_denied" : "unauthenticated";
    const failure = {
      method,
      peer: req.contextValues?.get(peerKey) ?? "",
      message: error.rawMessage,
    };
    if (meter.refusal === "unauthenticated") options.onAuthFailure?.(failure);
    else {
      options.onAuthFailure?.({ ...failure, deniedTo: tokenName(req, options) });
    }
  }
  const declared = declaredLength(req.header.get("content-length"));
  if (!error && declared !== undefined) {
    if (declared > limit) {
      meter.refusal = "too_large";
      error = tooLarge(handler.method, declared, limit);
    } else if (!budget.take(declared)) {
      meter.refusal = "busy";
      error = busy();
    } else {
      meter.reserved = declared;
    }
  }
  if (error) options.onRefused?.(meter.refusal as Refusal);
  let body = req.body;
  let header = req.header;
  if (isByteStream(body)) {
    if (error) {
      // Without its length, so that connect-es reaches for the body (and finds the refusal)
      // instead of judging the declared length against its own limit first.
      header = new Headers(header);
      header.delete("content-length");
    }
    body = error
      ? refusedBody(error)
      : meteredBody(body, {
          meter,
          deadline: Date.now() + options.limits.bodyTimeoutMs,
          check: (bytes) => {
            meter.received += bytes;
            if (meter.received > limit) {
              meter.refusal = "too_large";
              throw tooLarge(handler.method, meter.received, limit);
            }
            const extra = meter.received - meter.reserved;
            if (meter.reserving && extra > 0) {
              if (!budget.take(extra)) {
                meter.refusal = "busy";
                throw busy();
              }
              meter.reserved += extra;
            }
          },
          onRefused: () => options.onRefused?.(meter.refusal as Refusal),
          timeoutMs: options.limits.bodyTimeoutMs,
        });
  }
  let res: UniversalServerResponse;
  try {
    res = await handler({ ...req, header, body });
  } finally {
    meter.reserving = false;
    budget.give(meter.reserved);
  }
  return answer(res, req, meter);
}

/**
 * The handler's response, adjusted for a body that was not read to its end: over HTTP/1.1
 * the connection closes after the answer (Node.js would otherwise read and discard the rest
 * to keep the connection alive), and a body refused for its size is HTTP 413 in the Connect
 * protocol (connect-es answers `resource_exhausted` with 429, which reads as "retry later").
 */
function answer(
  res: UniversalServerResponse,
  req: UniversalServerRequest,
  meter: Meter,
): UniversalServerResponse {
  const closeConnection = !meter.finished && req.httpVersion.startsWith("1");
  const tooLargeStatus = meter.refusal === "too_large" && res.status === 429;
  if (!closeConnection && !tooLargeStatus) return res;
  const header = new Headers(res.header);
  if (closeConnection) header.set("connection", "close");
  return { ...res, header, status: tooLargeStatus ? 413 : res.status };
}

function tooLarge(method: DescMethod, bytes: number, limit: number): ConnectError {
  return toConnectError(
    new ControlError(
      "resource_exhausted",
      `request body of ${bytes} bytes is over the limit of ${limit} bytes for ${method.name}`,
    ),
  );
}

function busy(): ConnectError {
  return toConnectError(
    new ControlError(
      "resource_exhausted",
      "the admin API is reading too many request bytes at once; retry shortly",
    ),
  );
}

function declaredLength(value: string | null): number | undefined {
  return value !== null && /^\d{1,15}$/.test(value.trim()) ? Number(value) : undefined;
}

function isByteStream(body: unknown): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** A body that fails at once: connect-es answers `error` without touching the request. */
function refusedBody(error: ConnectError): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
  };
}

interface MeterOptions {
  readonly meter: Meter;
  readonly deadline: number;
  readonly timeoutMs: number;
  /** Counts a chunk; throws the ConnectError that refuses the request. */
  readonly check: (bytes: number) => void;
  readonly onRefused: () => void;
}

/**
 * `body`, counted as it arrives. On a refusal, and when the reader stops early, the request
 * is left unread rather than consumed or destroyed, so its answer still reaches the client
 * before the connection (HTTP/1.1) or stream (HTTP/2) is closed.
 */
function meteredBody(body: AsyncIterable<Uint8Array>, o: MeterOptions): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const source = body[Symbol.asyncIterator]();
      let failed: unknown;
      return {
        async next() {
          if (failed !== undefined) throw failed;
          try {
            const step = await beforeDeadline(source.next(), o.deadline, () => {
              o.meter.refusal = "slow_body";
              return toConnectError(
                new ControlError(
                  "deadline_exceeded",
                  `request body did not arrive within ${o.timeoutMs / 1000} s`,
                ),
              );
            });
            if (step.done) {
              o.meter.finished = true;
              return step;
            }
            o.check(step.value.byteLength);
            return step;
          } catch (error) {
            if (o.meter.refusal) {
              failed = error;
              o.onRefused();
            }
            throw error;
          }
        },
        async return() {
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** `step`, or the error `late()` makes once `deadline` (epoch ms) has passed. */
function beforeDeadline<T>(step: Promise<T>, deadline: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), Math.max(0, deadline - Date.now()));
  });
  step.catch(() => {
    // Settles after the deadline or once the request is abandoned: nothing is waiting.
  });
  return Promise.race([step, expired]).finally(() => clearTimeout(timer));
}
