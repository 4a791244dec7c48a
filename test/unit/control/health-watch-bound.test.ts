/**
 * The gRPC Health service's Watch needs no token and keeps its connection from idling out, so
 * the open Watch streams are bounded: one more than `maxWatches` is refused
 * `resource_exhausted`, and a slot frees when a Watch ends. Found by the security review of
 * 2026-12-07 (finding 2): 4,096 unauthenticated Watch streams held every admin connection, and
 * the operator, the dashboard and `/readyz` were locked out.
 */
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createHealthService } from "../../../control/admin/grpc-health.js";
import {
  type HealthCheckRequest,
  HealthCheckResponse_ServingStatus as Status,
} from "../../../proto/gen/grpc/health/v1/health_pb.js";

const service = createHealthService({
  ready: async () => true,
  draining: new AbortController().signal,
  services: () => new Set(),
  maxWatches: 3,
});

function open() {
  const call = new AbortController();
  const stream = (
    service.watch as unknown as (
      r: HealthCheckRequest,
      c: HandlerContext,
    ) => AsyncGenerator<{ status: Status }>
  )({ service: "" } as HealthCheckRequest, { signal: call.signal } as HandlerContext);
  return { call, stream };
}

describe("the health service's Watch streams", () => {
  it("are bounded: the one past the bound is refused resource_exhausted, and an ended one frees its slot", async () => {
    const watches = [open(), open(), open()];
    for (const w of watches) expect((await w.stream.next()).value?.status).toBe(Status.SERVING);
    const refused = open();
    const error = await refused.stream.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((error as ConnectError).rawMessage).toMatch(/3 health watches are open/);
    // One watcher hangs up: its slot goes to the next.
    watches[0]?.call.abort();
    await watches[0]?.stream.return(undefined);
    const next = open();
    expect((await next.stream.next()).value?.status).toBe(Status.SERVING);
    for (const w of [...watches, next]) {
      w.call.abort();
      await w.stream.return(undefined);
    }
  });
});
