import { create, toBinary } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../control/log.js";
import {
  AgentMessageSchema,
  type ConfigStatus,
  ConfigStatusSchema,
  type ObservedState,
  ObservedStateSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent, eventually, hello, openRawStream } from "../helpers/raw-agent.js";
import {
  FUZZ_TIMEOUT_MS,
  fuzzParams,
  fuzzRuns,
  hostileFrame,
  hostileString,
  messageArbitrary,
} from "./arbitraries.js";

/** How a stream fed hostile frames may end: each a clear refusal, never INTERNAL. */
const ALLOWED = new Set<number>([
  status.OK,
  status.INVALID_ARGUMENT,
  status.RESOURCE_EXHAUSTED,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.ABORTED,
]);

const encode = (body: Parameters<typeof create<typeof AgentMessageSchema>>[1]) =>
  toBinary(AgentMessageSchema, create(AgentMessageSchema, body));

/** A Hello Control accepts (node ids from a small pool), or one with hostile labels. */
const helloFrame = fc
  .tuple(
    fc.nat({ max: 7 }),
    fc.dictionary(fc.oneof(fc.constantFrom("zone", "pool", "rack"), hostileString), hostileString, {
      maxKeys: 3,
    }),
    fc.boolean(),
  )
  .map(([n, labels, hostileLabels]) =>
    encode(hello(`fuzz-${n}`, hostileLabels ? { labels } : {}) as never),
  );

/** Valid-but-hostile messages after Hello: reports for unknown operations, floods of text. */
const liveFrame = fc.oneof(
  messageArbitrary<ObservedState>(ObservedStateSchema).map((value) =>
    encode({ body: { case: "observed", value } }),
  ),
  messageArbitrary<ConfigStatus>(ConfigStatusSchema).map((value) =>
    encode({ body: { case: "configStatus", value } }),
  ),
  fc.constant(encode({ body: { case: "heartbeat", value: {} } })),
  hostileFrame(AgentMessageSchema),
);

describe("fuzz: a real Control fed hostile AgentMessage frames", () => {
  let tc: TestControl;
  let joinToken = "";
  const errors: string[] = [];
  beforeAll(async () => {
    const sink = { write: (line: string) => void errors.push(line) };
    tc = await startTestControl({
      log: createLogger({ level: "error", destination: sink }),
      config: { limits: { agentMessagesPerSecond: 100_000 } },
    });
    joinToken = await tc.joinToken();
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it(
    "ends each hostile stream with a clear status and never disturbs another agent",
    async () => {
      const sentinel = await connectAgent(tc.agentAddress, joinToken, "sentinel-1");
      const beat = setInterval(
        () => sentinel.stream.send({ body: { case: "heartbeat", value: {} } }),
        200,
      );
      const seen = new Map<number, number>();
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(helloFrame, hostileFrame(AgentMessageSchema)),
            fc.array(liveFrame, { maxLength: 6 }),
            async (first, rest) => {
              const stream = openRawStream(tc.agentAddress, joinToken);
              stream.sendRaw(first);
              for (const frame of rest) stream.sendRaw(frame);
              stream.close();
              const end = await stream.ended;
              seen.set(end.code, (seen.get(end.code) ?? 0) + 1);
              expect(ALLOWED, `${end.code} ${end.details}`).toContain(end.code);
            },
          ),
          fuzzParams(fuzzRuns(40, 1 / 100)),
        );
      } finally {
        clearInterval(beat);
      }
      expect(errors).toEqual([]);
      expect(tc.control.hub.nodeIds()).toContain("sentinel-1");
      await eventually(async () => (await fetch(`${tc.adminUrl}/healthz`)).ok, 2000, "healthz");
      expect(seen.get(status.INVALID_ARGUMENT) ?? 0).toBeGreaterThan(0);
      sentinel.stream.close();
    },
    FUZZ_TIMEOUT_MS,
  );

  it.each([
    ["a Hello label value", hello("nul-1", { labels: { zone: "a\u0000b" } }), /labels\.zone/],
    [
      "an ObservedState message",
      { body: { case: "observed", value: { operationId: "op-1", phase: 1, message: "\u0000" } } },
      /message contains a NUL/,
    ],
  ] as const)(
    "regression: U+0000 in %s ends the stream with INVALID_ARGUMENT, not INTERNAL",
    async (_, message, detail) => {
      const stream =
        message.body?.case === "hello"
          ? openRawStream(tc.agentAddress, joinToken)
          : (await connectAgent(tc.agentAddress, joinToken, "nul-2")).stream;
      stream.send(message as never);
      const end = await stream.ended;
      expect(end.code).toBe(status.INVALID_ARGUMENT);
      expect(end.details).toMatch(detail);
      expect(errors).toEqual([]);
    },
  );
});
