/**
 * Turns a protobuf-es service descriptor into a grpc-js service definition.
 *
 * protoc-gen-es generates message and service descriptors but no grpc-js code; this
 * adapter is the one place where the two meet. Control serves the Agent Control stream
 * with it, and the agent simulator builds its client from the same definition, so both
 * sides always encode exactly the messages of `proto/`.
 */
import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import { WireMessage } from "./wire-message.js";

/** A grpc-js method definition whose request and response are protobuf-es messages. */
export type GrpcMethodDefinition<I extends DescMessage, O extends DescMessage> = MethodDefinition<
  MessageShape<I>,
  MessageShape<O>
>;

/** Builds the grpc-js definition of one method: path, streaming flags and binary codecs. */
export function grpcMethodDefinition(
  method: DescMethod,
): GrpcMethodDefinition<DescMessage, DescMessage> {
  const input = method.input;
  const output = method.output;
  return {
    path: `/${method.parent.typeName}/${method.name}`,
    originalName: method.localName,
    requestStream:
      method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
    responseStream:
      method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
    requestSerialize: (value) =>
      value instanceof WireMessage ? value.bytes : Buffer.from(toBinary(input, value)),
    requestDeserialize: (bytes) => fromBinary(input, bytes),
    responseSerialize: (value) =>
      value instanceof WireMessage ? value.bytes : Buffer.from(toBinary(output, value)),
    responseDeserialize: (bytes) => fromBinary(output, bytes),
  };
}

/**
 * Builds a grpc-js `ServiceDefinition` keyed by each method's local name (`connect` for
 * `Connect`), usable with `server.addService` and `makeGenericClientConstructor`.
 */
export function grpcServiceDefinition(service: DescService): ServiceDefinition {
  const definition: Record<string, GrpcMethodDefinition<DescMessage, DescMessage>> = {};
  for (const method of service.methods) {
    definition[method.localName] = grpcMethodDefinition(method);
  }
  return definition;
}
