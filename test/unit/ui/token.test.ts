import { describe, expect, it } from "vitest";
import { fragmentToken } from "../../../ui/token-fragment.js";

describe("the dashboard's token in the URL fragment", () => {
  it("keeps the page a link names after the token (#token=…&/fleet deep-links)", () => {
    expect(fragmentToken("#token=s3cret&/fleet")).toEqual({ token: "s3cret", rest: "#/fleet" });
  });

  it("leaves no fragment when the link names no page, so no history entry holds the token", () => {
    expect(fragmentToken("#token=s3cret")).toEqual({ token: "s3cret", rest: "" });
  });

  it("decodes the token and keeps a campaign's page", () => {
    expect(fragmentToken("#token=a%2Bb&/campaigns/c-1")).toEqual({
      token: "a+b",
      rest: "#/campaigns/c-1",
    });
  });

  it("finds no token in an address without one", () => {
    expect(fragmentToken("#/fleet")).toBeUndefined();
    expect(fragmentToken("")).toBeUndefined();
  });
});
