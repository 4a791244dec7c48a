/**
 * `grpc.health.v1.Health` on the admin port, for load balancers, Kubernetes gRPC probes and
 * grpc-health-probe: SERVING while the database answers, NOT_SERVING when it does not or
 * once Control has begun to stop. It needs no token (a prober has none) and tells nothing
 * but the status.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../proto/gen/grpc/health/v1/health_pb.js";
import { ControlError, toConnectError } from "../errors.js";

/** Options of {@link createHealthService}. */
export interface HealthServiceOptions {
  /** True when Control can serve (the database answers). */
  readonly ready: () => Promise<boolean>;
  /** Aborted once Control begins to stop: every status is NOT_SERVING from then on. */
  readonly draining: AbortSignal;
  /** The fully-qualified services this port offers; `""` (the server) is always known. */
  readonly services: () => ReadonlySet<string>;
  /** How often a Watch re-checks readiness (default 5 s); draining is told at once. */
  readonly watchIntervalMs?: number;
  /**
   * How many Watch streams may be open at once (default {@link MAX_HEALTH_WATCHES}); one more
   * is refused `resource_exhausted`. Watch needs no token, and an open stream keeps its
   * connection from idling out: without a bound, unauthenticated watchers hold every admin
   * connection.
   */
  readonly maxWatches?: number;
}

/** The default bound on open Watch streams: far more than any set of probes needs. */
export const MAX_HEALTH_WATCHES = 64;

/**
 * The Health service: Check answers the status now (NOT_FOUND for an unknown service);
 * Watch sends the status now and then each change, SERVICE_UNKNOWN for an unknown service,
 * until the call ends. Readiness is asked at most once a second however many call.
 */
export function createHealthService(options: HealthServiceOptions): ServiceImpl<typeof Health> {
  const intervalMs = options.watchIntervalMs ?? 5000;
  const maxWatches = options.maxWatches ?? MAX_HEALTH_WATCHES;
  let watching = 0;
  let cached: { at: number; ready: Promise<boolean> } | undefined;
  const ready = (): Promise<boolean> => {
    const now = performance.now();
    if (cached === undefined || now - cached.at >= 1000) {
      cached = { at: now, ready: options.ready().catch(() => false) };
    }
    return cached.ready;
  };
  const status = async (): Promise<Status> => {
    if (options.draining.aborted) return Status.NOT_SERVING;
    const serving = await ready();
    return serving && !options.draining.aborted ? Status.SERVING : Status.NOT_SERVING;
  };
  const known = (service: string) => service === "" || options.services().has(service);
  const answer = (value: Status): HealthCheckResponse =>
    create(HealthCheckResponseSchema, { status: value });

  return {
    async check(request) {
      if (!known(request.service)) {
        throw toConnectError(
          new ControlError("service_not_found", `unknown service ${request.service}`),
        );
      }
      return answer(await status());
    },
    async *watch(request, context) {
      if (watching >= maxWatches) {
        throw toConnectError(
          new ControlError(
            "resource_exhausted",
            `${maxWatches} health watches are open, the most this Control serves: use Check, or watch again later`,
          ),
        );
      }
      watching++;
      try {
        yield* watchStatus(request, context);
      } finally {
        watching--;
      }
    },
  };

  /** The statuses of one Watch: now, then each change, until the call ends. */
  async function* watchStatus(
    request: { readonly service: string },
    context: { readonly signal: AbortSignal },
  ): AsyncGenerator<HealthCheckResponse> {
    if (!known(request.service)) {
      yield answer(Status.SERVICE_UNKNOWN);
      await pause(Number.POSITIVE_INFINITY, [context.signal]);
      return;
    }
    let last: Status | undefined;
    while (!context.signal.aborted) {
      const now = await status();
      if (now !== last) {
        last = now;
        yield answer(now);
      }
      // Once stopping, the status stays NOT_SERVING: only the call's end is waited for.
      if (options.draining.aborted) await pause(Number.POSITIVE_INFINITY, [context.signal]);
      else await pause(intervalMs, [context.signal, options.draining]);
    }
  }
}

/** Waits `ms` (forever when infinite) or until one of `signals` is aborted. */
function pause(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  if (signals.some((signal) => signal.aborted)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
    timer?.unref();
    for (const signal of signals) signal.addEventListener("abort", done, { once: true });
  });
}
