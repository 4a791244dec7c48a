/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`) on the admin port, so grpcurl,
 * grpcui and Postman list the admin services and call them without the .proto files. It
 * answers from the descriptors compiled into Control, the same ones that serve the calls;
 * like the protos in the repository, they are no secret, so it needs no token.
 */
import { create, type DescFile, type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type {
  ServerReflection,
  ServerReflectionRequest,
  ServerReflectionResponse,
} from "../../proto/gen/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
} from "../../proto/gen/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflectionRequestSchema as AlphaRequestSchema,
  ServerReflectionResponseSchema as AlphaResponseSchema,
  type ServerReflection as ServerReflectionV1alpha,
} from "../../proto/gen/grpc/reflection/v1alpha/reflection_pb.js";

/** The gRPC status codes reflection answers with in an `ErrorResponse`. */
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/** What reflection knows: the offered services' names and the files that define them. */
export interface ReflectionIndex {
  /** Fully-qualified names of the services offered, sorted. */
  readonly services: readonly string[];
  /** Every file by name: those defining a service, and all they import. */
  readonly files: ReadonlyMap<string, DescFile>;
  /** The file defining each fully-qualified symbol (service, method, message, enum, field-less). */
  readonly symbols: ReadonlyMap<string, DescFile>;
  /** Message names, for `all_extension_numbers_of_type`. */
  readonly messages: ReadonlySet<string>;
}

/** Indexes the services `services` (with their files and every file they import). */
export function indexServices(
  services: readonly { readonly typeName: string; readonly file: DescFile }[],
): ReflectionIndex {
  const files = new Map<string, DescFile>();
  const symbols = new Map<string, DescFile>();
  const messages = new Set<string>();
  const addMessage = (message: DescMessage, file: DescFile) => {
    symbols.set(message.typeName, file);
    messages.add(message.typeName);
    for (const nested of message.nestedMessages) addMessage(nested, file);
    for (const nested of message.nestedEnums) symbols.set(nested.typeName, file);
  };
  const addFile = (file: DescFile) => {
    if (files.has(file.name)) return;
    files.set(file.name, file);
    for (const service of file.services) {
      symbols.set(service.typeName, file);
      for (const method of service.methods) symbols.set(`${service.typeName}.${method.name}`, file);
    }
    for (const message of file.messages) addMessage(message, file);
    for (const en of file.enums) symbols.set(en.typeName, file);
    for (const dependency of file.dependencies) addFile(dependency);
  };
  for (const service of services) addFile(service.file);
  return {
    services: [...new Set(services.map((service) => service.typeName))].sort(),
    files,
    symbols,
    messages,
  };
}

/**
 * The ServerReflection service (its shape is the same in `v1` and `v1alpha`): one response
 * per request on the stream, in order. A file is sent with every file it imports, each once
 * per stream, as the protocol allows, so a client needs no second round trip.
 */
export function createReflectionService(
  index: () => ReflectionIndex,
): ServiceImpl<typeof ServerReflection> {
  return {
    async *serverReflectionInfo(requests) {
      const sent = new Set<string>();
      for await (const request of requests) yield answer(index(), request, sent);
    },
  };
}

function answer(
  index: ReflectionIndex,
  request: ServerReflectionRequest,
  sent: Set<string>,
): ServerReflectionResponse {
  const base = { validHost: request.host, originalRequest: request };
  const error = (errorCode: number, errorMessage: string) =>
    create(ServerReflectionResponseSchema, {
      ...base,
      messageResponse: { case: "errorResponse", value: { errorCode, errorMessage } },
    });
  const filesFrom = (file: DescFile | undefined, what: string) => {
    if (file === undefined) return error(NOT_FOUND, `${what} not found`);
    return create(ServerReflectionResponseSchema, {
      ...base,
      messageResponse: {
        case: "fileDescriptorResponse",
        value: { fileDescriptorProto: withImports(file, sent) },
      },
    });
  };
  const { messageRequest } = request;
  switch (messageRequest.case) {
    case "listServices":
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: {
          case: "listServicesResponse",
          value: { service: index.services.map((name) => ({ name })) },
        },
      });
    case "fileByFilename":
      return filesFrom(index.files.get(messageRequest.value), `file ${messageRequest.value}`);
    case "fileContainingSymbol":
      return filesFrom(index.symbols.get(messageRequest.value), `symbol ${messageRequest.value}`);
    case "fileContainingExtension":
      return error(
        NOT_FOUND,
        `extension ${messageRequest.value.extensionNumber} of ${messageRequest.value.containingType} not found`,
      );
    case "allExtensionNumbersOfType":
      if (!index.messages.has(messageRequest.value)) {
        return error(NOT_FOUND, `type ${messageRequest.value} not found`);
      }
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: messageRequest.value, extensionNumber: [] },
        },
      });
    case undefined:
      return error(INVALID_ARGUMENT, "empty reflection request");
  }
}

/** `file` and the files it imports, transitively, that this stream has not sent yet; `file` first. */
function withImports(file: DescFile, sent: Set<string>): Uint8Array[] {
  const out: Uint8Array[] = [];
  const visit = (at: DescFile, first: boolean) => {
    if (!first && sent.has(at.name)) return;
    sent.add(at.name);
    out.push(toBinary(FileDescriptorProtoSchema, at.proto));
    for (const dependency of at.dependencies) visit(dependency, false);
  };
  visit(file, true);
  return out;
}

/**
 * The same service under `grpc.reflection.v1alpha`, which older grpcurl and grpcui ask for:
 * its messages are v1's byte for byte, so each crosses over by its encoding.
 */
export function createReflectionServiceV1alpha(
  index: () => ReflectionIndex,
): ServiceImpl<typeof ServerReflectionV1alpha> {
  const v1 = createReflectionService(index);
  return {
    async *serverReflectionInfo(requests, context) {
      const asV1 = (async function* () {
        for await (const request of requests) {
          yield fromBinary(ServerReflectionRequestSchema, toBinary(AlphaRequestSchema, request));
        }
      })();
      for await (const response of v1.serverReflectionInfo(asV1, context)) {
        const v1Response = create(ServerReflectionResponseSchema, response);
        yield fromBinary(AlphaResponseSchema, toBinary(ServerReflectionResponseSchema, v1Response));
      }
    },
  };
}
