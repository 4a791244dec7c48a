import { describe, expect, it } from "vitest";
import { dashboardLink, desktopOpener } from "../../../cli/commands/ui.js";

describe("agentctl ui", () => {
  it("puts the token in the fragment of the dashboard's URL, escaped", () => {
    expect(dashboardLink("http://127.0.0.1:7080", "aat_abc")).toBe(
      "http://127.0.0.1:7080/ui/#token=aat_abc",
    );
    expect(dashboardLink("https://control.example/", "a&b=c#d")).toBe(
      "https://control.example/ui/#token=a%26b%3Dc%23d",
    );
  });

  it.each([
    ["linux", { DISPLAY: ":0" }, "xdg-open"],
    ["linux", { WAYLAND_DISPLAY: "wayland-0" }, "xdg-open"],
    ["linux", {}, undefined],
    ["darwin", {}, "open"],
    ["win32", { DISPLAY: ":0" }, undefined],
  ] as const)("on %s with %j opens with %s", (platform, env, opener) => {
    expect(desktopOpener(platform, env)).toBe(opener);
  });
});
