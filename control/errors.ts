/**
 * One error type with a closed set of codes, mapped in one table to a Connect code and a
 * gRPC status. Anything that is not a {@link ControlError} is `internal`: its detail is
 * logged by the caller, never sent to a client. On the admin API every error also carries a
 * `google.rpc.ErrorInfo` detail: the code as its reason, {@link ERROR_DOMAIN}, and the
 * error's metadata (the busy nodes and their campaigns, the field of an invalid argument).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { ErrorInfoSchema } from "../proto/gen/google/rpc/error_details_pb.js";

/** Every error code Control sends to a client. */
export type ErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "permission_denied"
  | "node_not_found"
  | "token_not_found"
  | "release_not_found"
  | "campaign_not_found"
  | "plan_not_found"
  | "desired_not_found"
  | "release_rejected"
  | "release_conflict"
  | "release_unusable"
  | "release_yanked"
  | "node_busy"
  | "no_eligible_nodes"
  | "invalid_plan"
  | "campaign_state"
  | "not_leader"
  | "unavailable"
  | "resource_exhausted"
  /** A request body that did not arrive in time (the admin API's body deadline). */
  | "deadline_exceeded"
  /** An RPC of a served service that this Control does not implement. */
  | "unimplemented"
  /** A gRPC health check for a service this Control does not serve. */
  | "service_not_found"
  | "internal";

interface Mapping {
  readonly connect: Code;
  readonly grpc: GrpcStatus;
}

/** The one table from error code to wire status. */
export const ERROR_MAPPING: Readonly<Record<ErrorCode, Mapping>> = {
  invalid_argument: { connect: Code.InvalidArgument, grpc: GrpcStatus.INVALID_ARGUMENT },
  unauthenticated: { connect: Code.Unauthenticated, grpc: GrpcStatus.UNAUTHENTICATED },
  permission_denied: { connect: Code.PermissionDenied, grpc: GrpcStatus.PERMISSION_DENIED },
  node_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  token_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  release_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  campaign_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  plan_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  desired_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  release_rejected: { connect: Code.InvalidArgument, grpc: GrpcStatus.INVALID_ARGUMENT },
  release_conflict: { connect: Code.AlreadyExists, grpc: GrpcStatus.ALREADY_EXISTS },
  /** A registered release the agents would refuse now (expired, or below a confirmed sequence). */
  release_unusable: { connect: Code.FailedPrecondition, grpc: GrpcStatus.FAILED_PRECONDITION },
  /** A release an operator yanked: never offered again, refused as a target. */
  release_yanked: { connect: Code.FailedPrecondition, grpc: GrpcStatus.FAILED_PRECONDITION },
  /** Not a conflict of names but of state: the node becomes free when its campaign ends. */
  node_busy: { connect: Code.FailedPrecondition, grpc: GrpcStatus.FAILED_PRECONDITION },
  no_eligible_nodes: { connect: Code.FailedPrecondition, grpc: GrpcStatus.FAILED_PRECONDITION },
  invalid_plan: { connect: Code.InvalidArgument, grpc: GrpcStatus.INVALID_ARGUMENT },
  campaign_state: { connect: Code.FailedPrecondition, grpc: GrpcStatus.FAILED_PRECONDITION },
  not_leader: { connect: Code.Unavailable, grpc: GrpcStatus.UNAVAILABLE },
  unavailable: { connect: Code.Unavailable, grpc: GrpcStatus.UNAVAILABLE },
  resource_exhausted: { connect: Code.ResourceExhausted, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  deadline_exceeded: { connect: Code.DeadlineExceeded, grpc: GrpcStatus.DEADLINE_EXCEEDED },
  unimplemented: { connect: Code.Unimplemented, grpc: GrpcStatus.UNIMPLEMENTED },
  service_not_found: { connect: Code.NotFound, grpc: GrpcStatus.NOT_FOUND },
  internal: { connect: Code.Internal, grpc: GrpcStatus.INTERNAL },
};

/** The `domain` of every `google.rpc.ErrorInfo` Control sends. */
export const ERROR_DOMAIN = "agentcontrol";

/**
 * The `reason` of the `google.rpc.ErrorInfo` of an error code: the code in UPPER_SNAKE_CASE,
 * as the ErrorInfo contract asks (`node_busy` → `NODE_BUSY`).
 */
export function errorReason(code: ErrorCode): string {
  return code.toUpperCase();
}

/**
 * Machine-readable facts of an error, sent as the metadata of its `google.rpc.ErrorInfo`.
 * Keys are lowerCamelCase; a list is its items joined by commas. Known keys: `field` (the
 * request field of an invalid argument, as a path such as `spec.batches[0].percent`),
 * `nodeIds` and `campaignIds` (of `node_busy`).
 */
export type ErrorMetadata = Readonly<Record<string, string>>;

/** An error whose message is safe and useful to show the client. */
export class ControlError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly metadata: ErrorMetadata = {},
  ) {
    super(message);
    this.name = "ControlError";
  }
}

/** The message clients see for errors that are not {@link ControlError}s. */
export const INTERNAL_MESSAGE = "internal error; the detail is in Control's log";

/**
 * Converts any thrown value to a ConnectError with a client-safe message and a
 * `google.rpc.ErrorInfo` detail (Connect, gRPC and gRPC-Web clients all receive it).
 */
export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  const code = error instanceof ControlError ? error.code : "internal";
  const info = {
    desc: ErrorInfoSchema,
    value: {
      reason: errorReason(code),
      domain: ERROR_DOMAIN,
      metadata: error instanceof ControlError ? { ...error.metadata } : {},
    },
  };
  const message = error instanceof ControlError ? error.message : INTERNAL_MESSAGE;
  return new ConnectError(message, ERROR_MAPPING[code].connect, undefined, [info]);
}

/** The gRPC status and client-safe message for any thrown value. */
export function toGrpcStatus(error: unknown): { code: GrpcStatus; details: string } {
  if (error instanceof ControlError) {
    return { code: ERROR_MAPPING[error.code].grpc, details: error.message };
  }
  return { code: GrpcStatus.INTERNAL, details: INTERNAL_MESSAGE };
}
