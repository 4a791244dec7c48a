import { create, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAgentMessage } from "../../control/agents/server.js";
import { MALFORMED } from "../../control/agents/session.js";
import { checkHello, checkObserved, HELLO_LIMITS } from "../../control/agents/validate.js";
import {
  AgentMessageSchema,
  type Hello,
  HelloSchema,
  type ObservedState,
  ObservedStateSchema,
} from "../../proto/gen/agentcontrol/v1/agent_control_pb.js";
import {
  FUZZ_TIMEOUT_MS,
  fuzzParams,
  fuzzRuns,
  hostileFrame,
  messageArbitrary,
} from "./arbitraries.js";

/** What the session does with a decoded message, minus the I/O: validate it. */
function handle(bytes: Uint8Array): void {
  const message = decodeAgentMessage(bytes);
  if (MALFORMED in message) {
    expect(typeof message[MALFORMED]).toBe("string");
    return;
  }
  const body = message.body;
  if (body.case === "hello") {
    const checked = checkHello(body.value);
    if (checked.ok) {
      const v = checked.value;
      expect(v.nodeId).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/);
      expect(v.nodeId.length).toBeLessThanOrEqual(HELLO_LIMITS.nodeIdLength);
      expect(Object.keys(v.labels).length).toBeLessThanOrEqual(HELLO_LIMITS.labels);
      expect(v.offered.length).toBeLessThanOrEqual(HELLO_LIMITS.capabilities);
      expect(Number.isSafeInteger(v.confirmedSequence)).toBe(true);
      expect(JSON.stringify(v.labels).length).toBeLessThan(64 * 400);
    } else {
      expect(checked.message).toMatch(/^invalid Hello: /);
      expect(checked.message.length).toBeLessThan(2000);
    }
  } else if (body.case === "observed") {
    const checked = checkObserved(body.value);
    if (checked.ok) {
      expect(checked.value.message.length).toBeLessThanOrEqual(1024);
      expect(checked.value.operationId.length).toBeLessThanOrEqual(256);
    } else {
      expect(checked.message).toMatch(/^invalid ObservedState: /);
    }
  }
}

describe("fuzz: the AgentMessage decoder and the checks Control runs on what it decodes", () => {
  it(
    "never throws on random bytes",
    () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 1024 }), (bytes) => handle(bytes)),
        fuzzParams(fuzzRuns(500)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "never throws on mutated and hostile-but-valid AgentMessages",
    () => {
      fc.assert(
        fc.property(hostileFrame(AgentMessageSchema), (bytes) => handle(bytes)),
        fuzzParams(fuzzRuns(500)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "validates any Hello and ObservedState without throwing",
    () => {
      fc.assert(
        fc.property(
          messageArbitrary<Hello>(HelloSchema),
          messageArbitrary<ObservedState>(ObservedStateSchema),
          (hello, observed) => {
            const asHello = create(AgentMessageSchema, { body: { case: "hello", value: hello } });
            const asObserved = create(AgentMessageSchema, {
              body: { case: "observed", value: observed },
            });
            handle(toBinary(AgentMessageSchema, asHello));
            handle(toBinary(AgentMessageSchema, asObserved));
          },
        ),
        fuzzParams(fuzzRuns(1000)),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
