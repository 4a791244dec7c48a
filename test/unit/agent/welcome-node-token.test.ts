/**
 * Attack: one hostile Welcome bricked the Agent. A node token that cannot travel as gRPC
 * metadata ("ant.evil\nX-Injected: 1") was saved to state.json, and every later start died
 * when it was set as `authorization` ("illegal characters").
 *
 * Expected: a Welcome's node token is taken only on an enrollment (join-token) stream (SPEC
 * §2: `node_token` only when the stream enrolled with a join token), only when it can be sent
 * as a header value (visible ASCII) and only up to 4 KiB; anything else is refused, never
 * saved, and the Agent keeps the credential it had.
 */
import { describe, expect, it } from "vitest";
import {
  MAX_NODE_TOKEN_CHARS,
  nodeTokenRefusal,
  welcomedNodeToken,
} from "../../../agent/core/welcome.js";

describe("a Welcome's node token", () => {
  it.each([
    ["a newline (a header injection)", "ant.evil\nX-Injected: 1"],
    ["a carriage return", "ant.evil\r"],
    ["a space", "ant.a b"],
    ["U+0000", "ant.\u0000"],
    ["a character beyond ASCII", "ant.é"],
    ["more than 4 KiB", `ant.${"A".repeat(MAX_NODE_TOKEN_CHARS)}`],
  ])("is refused on an enrollment stream when it holds %s", (_what, token) => {
    expect(nodeTokenRefusal(token)).toBeTypeOf("string");
    const verdict = welcomedNodeToken(token, { enrolling: true, current: undefined });
    expect(verdict.kind).toBe("refused");
  });

  it("is taken on an enrollment stream when it is visible ASCII of at most 4 KiB", () => {
    const token = `ant.${"A".repeat(MAX_NODE_TOKEN_CHARS - 4)}`;
    expect(nodeTokenRefusal(token)).toBeUndefined();
    expect(welcomedNodeToken(token, { enrolling: true, current: undefined })).toEqual({
      kind: "take",
      token,
    });
  });

  it("is refused on a stream opened with the node's own token, even a well-formed one", () => {
    expect(welcomedNodeToken("ant.other", { enrolling: false, current: "ant.mine" })).toMatchObject(
      { kind: "refused" },
    );
  });

  it("changes nothing when absent, or when it is the token the node already holds", () => {
    expect(welcomedNodeToken("", { enrolling: true, current: undefined })).toEqual({
      kind: "none",
    });
    expect(welcomedNodeToken("", { enrolling: false, current: "ant.mine" })).toEqual({
      kind: "none",
    });
    expect(welcomedNodeToken("ant.mine", { enrolling: false, current: "ant.mine" })).toEqual({
      kind: "none",
    });
  });
});
