import { connect } from "node:http2";
import {
  type DescMessage,
  type DescMethod,
  fromBinary,
  fromJson,
  fromJsonString,
  type JsonValue,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../control/log.js";
import { AuditService } from "../../proto/gen/agentcontrol/admin/v1/audit_pb.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { OPERATOR_TOKEN, startTestControl, type TestControl } from "../helpers/control.js";
import {
  FUZZ_TIMEOUT_MS,
  fuzzParams,
  fuzzRuns,
  hostileFrame,
  messageArbitrary,
  mutatedEncoding,
} from "./arbitraries.js";

const METHODS: readonly DescMethod[] = [
  NodeService,
  ReleaseService,
  CampaignService,
  AuditService,
].flatMap((service) => service.methods);
const UNARY = METHODS.filter((m) => m.methodKind === "unary");

/**
 * The errors protobuf-es decoders throw on bad input (found by this fuzz): Error (bad tag,
 * wire type, JSON shape), RangeError (premature EOF), TypeError only from the strict UTF-8
 * decoder. Anything else is a finding.
 */
function expectDecodeError(error: unknown): void {
  expect(error).toBeInstanceOf(Error);
  const { name, message } = error as Error;
  if (name === "TypeError") expect(message).toMatch(/not valid for encoding utf-8/);
  else expect(["Error", "RangeError"]).toContain(name);
  expect(message).not.toMatch(/call stack|Cannot read/);
}

function decodesOrRefuses(decode: () => unknown): void {
  try {
    decode();
  } catch (error) {
    expectDecodeError(error);
  }
}

describe("fuzz: admin API request decoders", () => {
  it.each(METHODS.map((m) => [`${m.parent.name}/${m.name}`, m.input] as const))(
    "%s request: random and mutated binary, random JSON, only decode errors",
    (_, schema: DescMessage) => {
      fc.assert(
        fc.property(
          fc.oneof(fc.uint8Array({ maxLength: 300 }), mutatedEncoding(schema)),
          fc.jsonValue({ maxDepth: 3 }),
          fc.string({ unit: "binary", maxLength: 200 }),
          (bytes, json, text) => {
            decodesOrRefuses(() => fromBinary(schema, bytes));
            decodesOrRefuses(() => fromJson(schema, json as JsonValue));
            decodesOrRefuses(() => fromJsonString(schema, text));
          },
        ),
        fuzzParams(fuzzRuns(150, 1 / 20)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe("fuzz: a real admin server answers random bodies with 4xx, never 5xx", () => {
  let tc: TestControl;
  const errors: string[] = [];
  beforeAll(async () => {
    const sink = { write: (line: string) => void errors.push(line) };
    tc = await startTestControl({ log: createLogger({ level: "error", destination: sink }) });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  type Body = { contentType: string; body: Uint8Array | string };
  const bodyFor = (method: DescMethod): fc.Arbitrary<Body> =>
    fc.oneof(
      hostileFrame(method.input).map((body) => ({ contentType: "application/proto", body })),
      fc
        .jsonValue({ maxDepth: 3 })
        .map((v) => ({ contentType: "application/json", body: JSON.stringify(v) ?? "null" })),
      messageArbitrary(method.input).map((m) => {
        try {
          return { contentType: "application/json", body: JSON.stringify(toJson(method.input, m)) };
        } catch {
          return { contentType: "application/proto", body: toBinary(method.input, m) };
        }
      }),
    );

  it(
    "POSTs random, mutated and hostile-but-valid requests to every unary RPC",
    async () => {
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...UNARY)
            .chain((method) => fc.tuple(fc.constant(method), bodyFor(method))),
          fc.constantFrom(tc.operatorToken, tc.viewerToken, ""),
          async ([method, { contentType, body }], token) => {
            const response = await fetch(
              `${tc.adminUrl}/${method.parent.typeName}/${method.name}`,
              {
                method: "POST",
                headers: {
                  "content-type": contentType,
                  ...(token ? { authorization: `Bearer ${token}` } : {}),
                },
                body,
              },
            );
            await response.arrayBuffer();
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            expect(response.status, `${method.name} ${contentType}`).toBeLessThan(500);
          },
        ),
        fuzzParams(fuzzRuns(150, 1 / 50)),
      );
      expect(errors).toEqual([]);
      expect((await fetch(`${tc.adminUrl}/healthz`)).status).toBe(200);
      expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
    },
    FUZZ_TIMEOUT_MS,
  );

  it("regression: a body that is not protobuf binary is invalid_argument (400), not internal (500)", async () => {
    const response = await fetch(
      `${tc.adminUrl}/agentcontrol.admin.v1.CampaignService/RetryCampaign`,
      {
        method: "POST",
        headers: {
          "content-type": "application/proto",
          authorization: `Bearer ${tc.operatorToken}`,
        },
        body: Uint8Array.from([0, 1, 0]),
      },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_argument" });
  });

  it("regression: the same over gRPC ends with grpc-status 3, not 13", async () => {
    const trailers = await grpcCall(
      tc.adminUrl,
      "/agentcontrol.admin.v1.NodeService/GetNode",
      [0, 1, 0],
    );
    expect(trailers["grpc-status"]).toBe("3");
    expect(decodeURIComponent(String(trailers["grpc-message"]))).toMatch(/^parse binary/);
  });

  it.each([
    ["NodeService/GetNode", { nodeId: "\u0000" }, /nodeId/],
    ["NodeService/CreateJoinToken", { description: "a\u0000" }, /description/],
    ["NodeService/ListNodes", { labels: { zone: "\u0000" } }, /labels\.zone/],
    ["CampaignService/AbortCampaign", { id: "\u0000" }, /id/],
    ["AuditService/ListAuditEvents", { campaignId: "\u0000" }, /campaignId/],
  ] as const)(
    "regression: U+0000 in a %s string is invalid_argument (400), not internal",
    async (method, body, field) => {
      const response = await fetch(`${tc.adminUrl}/agentcontrol.admin.v1.${method}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${tc.operatorToken}`,
        },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
      const error = (await response.json()) as { code: string; message: string };
      expect(error.code).toBe("invalid_argument");
      expect(error.message).toMatch(field);
    },
  );

  it("regression: a label filter key like toString, valueOf or $or is answered below 500", async () => {
    for (const labels of [
      { toString: "" },
      { valueOf: "1" },
      { $or: "x" },
      { __proto__x: "y" },
      { "?": "" },
    ]) {
      const response = await fetch(`${tc.adminUrl}/agentcontrol.admin.v1.NodeService/ListNodes`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tc.viewerToken}` },
        body: JSON.stringify({ labels }),
      });
      expect(response.status).toBeLessThan(500);
    }
  });
});

/** One gRPC call with a raw message frame; resolves with the trailers. */
async function grpcCall(
  baseUrl: string,
  path: string,
  message: number[],
): Promise<Record<string, unknown>> {
  const session = connect(baseUrl);
  try {
    return await new Promise((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        authorization: `Bearer ${OPERATOR_TOKEN}`,
      });
      stream.on("trailers", (trailers) => resolve(trailers));
      stream.on("error", reject);
      stream.on("data", () => undefined);
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      Buffer.from(message).copy(frame, 5);
      stream.end(frame);
    });
  } finally {
    session.close();
  }
}
