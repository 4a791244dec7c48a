/**
 * The standard gRPC services the admin port answers besides the admin API, so tools made for
 * any gRPC server work with it: `grpc.health.v1.Health` (load balancers, probes) and server
 * reflection, `grpc.reflection.v1` and `v1alpha` (grpcurl, grpcui). They sit on a Connect
 * handler of their own, outside the admin API's token check and body guard: a prober has no
 * token, and these calls carry a few bytes each (at most {@link MAX_REQUEST_BYTES}).
 */
import type { DescService } from "@bufbuild/protobuf";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health } from "../../proto/gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../proto/gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../proto/gen/grpc/reflection/v1alpha/reflection_pb.js";
import { createHealthService } from "./grpc-health.js";
import {
  createReflectionService,
  createReflectionServiceV1alpha,
  indexServices,
  type ReflectionIndex,
} from "./grpc-reflection.js";

/** The largest request message these services read. */
export const MAX_REQUEST_BYTES = 4096;

const STANDARD: readonly DescService[] = [Health, ServerReflection, ServerReflectionV1alpha];
const PREFIXES = STANDARD.map((service) => `/${service.typeName}/`);

/** Options of {@link createStandardServices}. */
export interface StandardServicesOptions {
  /** True when Control can serve (the database answers). */
  readonly ready: () => Promise<boolean>;
  /** Aborted once Control begins to stop: health is NOT_SERVING from then on. */
  readonly draining: AbortSignal;
  /** The admin API's services, listed by reflection and known to health checks. */
  readonly adminServices: () => readonly DescService[];
}

/** The standard services' request handler and the paths it owns. */
export interface StandardServices {
  /** True for a request path one of the standard services answers. */
  owns(path: string): boolean;
  /** The Node.js request handler (HTTP/2 for gRPC; HTTP/1.1 for gRPC-Web and Connect too). */
  readonly handler: ReturnType<typeof connectNodeAdapter>;
}

/** Creates the handler of the health and reflection services. */
export function createStandardServices(options: StandardServicesOptions): StandardServices {
  let index: ReflectionIndex | undefined;
  // The admin services are registered once, before the first request; index them then.
  const reflection = () => {
    index ??= indexServices([...options.adminServices(), ...STANDARD]);
    return index;
  };
  const handler = connectNodeAdapter({
    routes: (router) => {
      router.service(
        Health,
        createHealthService({
          ready: options.ready,
          draining: options.draining,
          services: () => new Set(reflection().services),
        }),
      );
      router.service(ServerReflection, createReflectionService(reflection));
      router.service(ServerReflectionV1alpha, createReflectionServiceV1alpha(reflection));
    },
    readMaxBytes: MAX_REQUEST_BYTES,
  });
  return { owns: (path) => PREFIXES.some((prefix) => path.startsWith(prefix)), handler };
}
