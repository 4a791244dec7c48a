/**
 * A message already in protobuf wire form. The gRPC serializers of
 * {@link grpcMethodDefinition} write its bytes as they are, so a message encoded once (an
 * operation stored in the outbox) is never encoded again per send.
 */
export class WireMessage {
  /** `bytes` must be a valid encoding of the method's message type. */
  constructor(readonly bytes: Buffer) {}
}
