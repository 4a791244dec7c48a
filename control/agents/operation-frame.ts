/**
 * Operations in wire form: what the outbox stores and what the hub sends. A `ControlMessage`
 * carrying an operation is framed around the operation's stored bytes (protobuf embeds a
 * message as a length-delimited field), so sending never re-encodes it.
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { ControlMessageSchema } from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { WireMessage } from "../shared/wire-message.js";

/** An `agentcontrol.v1.Operation` as encoded bytes, with its id. */
export interface EncodedOperation {
  readonly id: string;
  /** A valid encoding of `Operation` whose `id` is {@link EncodedOperation.id}. */
  readonly bytes: Uint8Array;
}

const OPERATION_FIELD = ControlMessageSchema.field.operation.number;

/** The `ControlMessage { operation }` around an encoded operation. */
export function operationFrame(operation: EncodedOperation): WireMessage {
  const bytes = new BinaryWriter()
    .tag(OPERATION_FIELD, WireType.LengthDelimited)
    .bytes(operation.bytes)
    .finish();
  return new WireMessage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
