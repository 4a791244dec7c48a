/**
 * The admin port answers the standard gRPC health and reflection services to a real grpc-js
 * client over cleartext HTTP/2, without a token, as grpcurl and load balancers use them.
 */
import { create, type DescMessage, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcServiceDefinition } from "../../control/shared/grpc-service.js";
import {
  Health,
  HealthCheckRequestSchema,
  type HealthCheckResponse,
  HealthCheckResponse_ServingStatus as Status,
} from "../../proto/gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
} from "../../proto/gen/grpc/reflection/v1/reflection_pb.js";
import {
  ServerReflectionRequestSchema as AlphaRequestSchema,
  type ServerReflectionResponse as AlphaResponse,
  ServerReflection as ServerReflectionV1alpha,
} from "../../proto/gen/grpc/reflection/v1alpha/reflection_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { eventually, openRawStream } from "../helpers/raw-agent.js";

const HealthClient = grpc.makeGenericClientConstructor(grpcServiceDefinition(Health), "Health");
const ReflectionClient = grpc.makeGenericClientConstructor(
  grpcServiceDefinition(ServerReflection),
  "ServerReflection",
);
const AlphaReflectionClient = grpc.makeGenericClientConstructor(
  grpcServiceDefinition(ServerReflectionV1alpha),
  "ServerReflection",
);

type Unary<Req, Res> = (
  request: Req,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => void;

describe("gRPC health and reflection on the admin port", { timeout: 60_000 }, () => {
  let tc: TestControl;
  let address = "";
  const clients: grpc.Client[] = [];
  const client = <C extends grpc.Client>(
    make: new (a: string, c: grpc.ChannelCredentials) => C,
  ) => {
    const made = new make(address, grpc.credentials.createInsecure());
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    tc = await startTestControl();
    address = new URL(tc.adminUrl).host;
  });

  afterAll(async () => {
    for (const made of clients) made.close();
    await tc?.stop();
  });

  const check = (service: string) => {
    const health = client(HealthClient) as unknown as { check: Unary<object, HealthCheckResponse> };
    return new Promise<HealthCheckResponse>((resolve, reject) =>
      health.check(create(HealthCheckRequestSchema, { service }), (error, response) =>
        error ? reject(error) : resolve(response!),
      ),
    );
  };

  /** Sends `requests` on one reflection stream and collects one response per request. */
  const reflect = <R>(
    make: typeof ReflectionClient,
    schema: DescMessage,
    requests: Record<string, unknown>[],
  ) => {
    const reflection = client(make) as unknown as {
      serverReflectionInfo(): grpc.ClientDuplexStream<object, R>;
    };
    const call = reflection.serverReflectionInfo();
    const responses: R[] = [];
    return new Promise<R[]>((resolve, reject) => {
      call.on("data", (response: R) => {
        responses.push(response);
        if (responses.length === requests.length) call.end();
      });
      call.on("error", reject);
      call.on("end", () => resolve(responses));
      for (const request of requests) call.write(create(schema, request));
    });
  };

  it("Check: SERVING for the server and each admin service, with no token", async () => {
    expect((await check("")).status).toBe(Status.SERVING);
    expect((await check("agentcontrol.admin.v1.NodeService")).status).toBe(Status.SERVING);
    expect((await check("grpc.health.v1.Health")).status).toBe(Status.SERVING);
  });

  it("Check: NOT_FOUND for a service the port does not offer", async () => {
    await expect(check("agentcontrol.v1.NoSuchService")).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
  });

  it("refuses a request message over 4 KiB without a token check or a large read", async () => {
    await expect(check("x".repeat(8192))).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
  });

  it("reflection v1 lists the services and sends a service's file with its imports", async () => {
    const [list, file] = await reflect<ServerReflectionResponse>(
      ReflectionClient,
      ServerReflectionRequestSchema,
      [
        { host: "", messageRequest: { case: "listServices", value: "" } },
        {
          host: "",
          messageRequest: {
            case: "fileContainingSymbol",
            value: "agentcontrol.admin.v1.NodeService",
          },
        },
      ],
    );
    expect(list?.messageResponse.case).toBe("listServicesResponse");
    const names =
      list?.messageResponse.case === "listServicesResponse"
        ? list.messageResponse.value.service.map((s) => s.name)
        : [];
    expect(names).toEqual(
      expect.arrayContaining([
        "agentcontrol.admin.v1.NodeService",
        "agentcontrol.admin.v1.CampaignService",
        "agentcontrol.admin.v1.ReleaseService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
      ]),
    );
    expect(file?.messageResponse.case).toBe("fileDescriptorResponse");
    const files =
      file?.messageResponse.case === "fileDescriptorResponse"
        ? file.messageResponse.value.fileDescriptorProto.map((bytes) =>
            fromBinary(FileDescriptorProtoSchema, bytes),
          )
        : [];
    expect(files[0]?.name).toBe("agentcontrol/admin/v1/node.proto");
    expect(files[0]?.service.map((s) => s.name)).toContain("NodeService");
    // Every import of the file came along, so a client can decode without asking again.
    const sentNames = new Set(files.map((f) => f.name));
    for (const dependency of files[0]?.dependency ?? []) expect(sentNames).toContain(dependency);
  });

  it("reflection v1alpha answers too, and an unknown symbol is NOT_FOUND in the stream", async () => {
    const [list, unknown] = await reflect<AlphaResponse>(
      AlphaReflectionClient,
      AlphaRequestSchema,
      [
        { host: "", messageRequest: { case: "listServices", value: "*" } },
        { host: "", messageRequest: { case: "fileContainingSymbol", value: "no.such.Thing" } },
      ],
    );
    expect(list?.messageResponse.case).toBe("listServicesResponse");
    expect(unknown?.messageResponse).toMatchObject({
      case: "errorResponse",
      value: { errorCode: grpc.status.NOT_FOUND },
    });
  });

  it("Watch: SERVING now, then NOT_SERVING while Control drains its agents, the port still open", async () => {
    // A stream that never says Hello is not told to go by the drain: it keeps Control
    // draining for limits.shutdownGraceSeconds (a welcomed agent is closed at once and goes).
    const stream = openRawStream(tc.agentAddress, await tc.joinToken());
    const handshaking = async () =>
      /^agent_control_handshakes_in_flight 1$/m.test(
        await (await fetch(`${tc.adminUrl}/metrics`)).text(),
      );
    await eventually(handshaking, 5000, "the Hello-less stream held by Control");
    const health = client(HealthClient) as unknown as {
      watch(request: object): grpc.ClientReadableStream<HealthCheckResponse>;
    };
    const call = health.watch(create(HealthCheckRequestSchema, { service: "" }));
    const statuses: Status[] = [];
    const ended = new Promise<void>((resolve) => {
      call.on("error", () => resolve());
      call.on("end", () => resolve());
    });
    const first = new Promise<void>((resolve) =>
      call.on("data", (response: HealthCheckResponse) => {
        statuses.push(response.status);
        resolve();
      }),
    );
    await first;
    expect(statuses).toEqual([Status.SERVING]);
    const stopped = tc.control.stop();
    await eventually(() => statuses.length === 2, 5000, "NOT_SERVING on the Watch");
    expect((await check("")).status).toBe(Status.NOT_SERVING);
    const readyz = await fetch(`${tc.adminUrl}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.text()).toBe("draining\n");
    await stopped;
    await ended;
    stream.close();
    expect(statuses).toEqual([Status.SERVING, Status.NOT_SERVING]);
  });
});
