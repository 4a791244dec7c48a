import { describe, expect, it } from "vitest";
import { joinTokenScope } from "../../../control/admin/node-service.js";
import { alreadyEnrolledMessage, scopeDecision } from "../../../control/agents/enrollment.js";
import { ControlError } from "../../../control/errors.js";

describe("what a join token may enroll", () => {
  it.each([
    ["a plain token gets no leave to re-enroll", [], false, "n-1", { ok: true, grant: null }],
    [
      "a token allowing re-enrollment may re-enroll any id",
      [],
      true,
      "n-1",
      { ok: true, grant: "allow_reenroll" },
    ],
    [
      "a token for named ids may (re-)enroll a named id",
      ["n-1", "n-2"],
      false,
      "n-2",
      {
        ok: true,
        grant: "named",
      },
    ],
    [
      "a token for named ids may not enroll another id",
      ["n-1"],
      false,
      "n-3",
      {
        ok: false,
        message: 'join token t1 was created for other node ids and may not enroll node "n-3"',
      },
    ],
  ] as const)("%s", (_name, nodeIds, allowReenroll, nodeId, expected) => {
    expect(scopeDecision("t1", { nodeIds, allowReenroll }, nodeId)).toEqual(expected);
  });

  it("tells the agent how an operator lets an enrolled node back in", () => {
    expect(alreadyEnrolledMessage("web-7")).toBe(
      'node "web-7" is already enrolled; an operator must reset it (agentctl node reset web-7) or, unless it was revoked, issue a join token that allows re-enrollment',
    );
  });
});

describe("the scope of a join token to create", () => {
  it("deduplicates named node ids, keeping their order", () => {
    expect(joinTokenScope({ nodeIds: ["b", "a", "b"], allowReenroll: false })).toEqual({
      nodeIds: ["b", "a"],
      allowReenroll: false,
    });
  });

  it.each([
    ["an invalid node id", { nodeIds: ["ok-1", "not ok"], allowReenroll: false }, /"not ok"/],
    [
      "named ids with allow_reenroll",
      { nodeIds: ["a"], allowReenroll: true },
      /cannot be combined/,
    ],
    [
      "more than 1000 ids",
      { nodeIds: Array.from({ length: 1001 }, (_, i) => `n-${i}`), allowReenroll: false },
      /at most 1000/,
    ],
  ])("refuses %s as invalid_argument", (_name, req, message) => {
    let thrown: unknown;
    try {
      joinTokenScope(req);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ControlError);
    expect((thrown as ControlError).code).toBe("invalid_argument");
    expect((thrown as ControlError).message).toMatch(message);
  });
});
