import type { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { authenticate, type TokenEntry } from "../../../control/admin/auth.js";
import { AUTH_FAILURE_REASONS, authFailureReason } from "../../../control/admin/auth-failures.js";
import { sha256OfText } from "../../../control/auth/secrets.js";

const entries: TokenEntry[] = [
  {
    sha256: sha256OfText("old-token-0123456789"),
    name: "old",
    role: "operator",
    expires: new Date("2030-01-01T00:00:00Z"),
  },
];

/** The message `authenticate` refuses `authorization` with. */
function refusal(authorization: string | undefined): string {
  try {
    authenticate(authorization, entries, new Date("2031-01-01T00:00:00Z"));
  } catch (error) {
    return (error as ConnectError).rawMessage;
  }
  throw new Error("authenticated");
}

describe("the reason a failed admin authentication is counted under", () => {
  it.each<[string, string | undefined, string]>([
    ["no header", undefined, "missing_token"],
    ["another scheme", "Basic abc", "missing_token"],
    ["a guessed token", "Bearer guessed-token-0123456789", "unknown_token"],
    ["an expired token", "Bearer old-token-0123456789", "expired_token"],
  ])("names %s by what authenticate refused", (_, authorization, reason) => {
    expect(authFailureReason(refusal(authorization))).toBe(reason);
  });

  it("counts any other message as other, a reason the metric exports too", () => {
    expect(authFailureReason("something new")).toBe("other");
    expect(AUTH_FAILURE_REASONS).toContain("other");
  });
});
