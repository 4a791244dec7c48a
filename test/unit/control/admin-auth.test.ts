import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  AdminTokenTable,
  authenticate,
  authorizeCall,
  type TokenEntry,
  tokenEntries,
} from "../../../control/admin/auth.js";
import { sha256OfText } from "../../../control/auth/secrets.js";

const NOW = new Date("2030-06-01T12:00:00Z");
const LIST_NODES = "agentcontrol.admin.v1.NodeService/ListNodes";
const DISABLE_NODE = "agentcontrol.admin.v1.NodeService/DisableNode";

const entries: TokenEntry[] = tokenEntries("operator-token-0123456789", [
  { name: "ci", role: "operator", sha256: sha256OfText("ci-token"), expires: NOW },
  {
    name: "dash",
    role: "viewer",
    sha256: sha256OfText("dash-token"),
    expires: new Date(NOW.getTime() + 1),
  },
  { name: "forever", role: "viewer", sha256: sha256OfText("forever-token"), expires: undefined },
]);

function refusal(run: () => unknown): { code: Code; message: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    return { code: (error as ConnectError).code, message: (error as ConnectError).rawMessage };
  }
}

describe("admin token authentication", () => {
  it.each([
    ["no header", undefined, /^missing bearer token/],
    ["a header that is not Bearer", "Basic abc", /^missing bearer token/],
    ["an unknown token", "Bearer nope", /^unknown admin token$/],
    [
      "a token expiring at this instant",
      "Bearer ci-token",
      /^token expired at 2030-06-01T12:00:00.000Z/,
    ],
  ])("refuses %s as unauthenticated", (_, header, message) => {
    const refused = refusal(() => authenticate(header, entries, NOW));
    expect(refused?.code).toBe(Code.Unauthenticated);
    expect(refused?.message).toMatch(message);
  });

  it("accepts a token until its expiry and one without, naming the principal", () => {
    expect(authenticate("Bearer dash-token", entries, NOW).name).toBe("dash");
    expect(
      authenticate("Bearer forever-token", entries, new Date("2999-01-01T00:00:00Z")).name,
    ).toBe("forever");
    expect(authenticate("Bearer operator-token-0123456789", entries, NOW)).toMatchObject({
      name: "admin",
      role: "operator",
    });
  });

  it("judges expiry before role: an expired operator token is unauthenticated, not denied", () => {
    expect(refusal(() => authorizeCall(DISABLE_NODE, "Bearer ci-token", entries, NOW))?.code).toBe(
      Code.Unauthenticated,
    );
    expect(
      refusal(() => authorizeCall(DISABLE_NODE, "Bearer dash-token", entries, NOW))?.code,
    ).toBe(Code.PermissionDenied);
    expect(authorizeCall(LIST_NODES, "Bearer dash-token", entries, NOW).name).toBe("dash");
  });

  it("applies a replaced table from the next call on, through the same entries array", () => {
    const table = new AdminTokenTable(entries);
    const view = table.entries;
    expect(authenticate("Bearer forever-token", view, NOW).name).toBe("forever");
    table.replace(
      tokenEntries("operator-token-0123456789", [
        {
          name: "rotated",
          role: "viewer",
          sha256: sha256OfText("rotated-token"),
          expires: undefined,
        },
      ]),
    );
    expect(table.entries).toBe(view);
    expect(authenticate("Bearer rotated-token", view, NOW).name).toBe("rotated");
    expect(refusal(() => authenticate("Bearer forever-token", view, NOW))?.message).toBe(
      "unknown admin token",
    );
  });
});
