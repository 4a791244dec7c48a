import { describe, expect, it } from "vitest";
import { servingLine } from "../../../control/serving-line.js";

describe("the line Control prints once it serves", () => {
  it("names the address the agent listener is bound to, not only its port", () => {
    expect(servingLine({ host: "0.0.0.0", port: 7443 }, 7443, "https://127.0.0.1:7444")).toBe(
      "Agent Control is serving agents on 0.0.0.0:7443 and the admin API on https://127.0.0.1:7444",
    );
  });

  it("writes the port the listener got when the configured one was 0, and IPv6 in brackets", () => {
    expect(servingLine({ host: "::1", port: 0 }, 41234, "http://[::1]:7444")).toBe(
      "Agent Control is serving agents on [::1]:41234 and the admin API on http://[::1]:7444",
    );
  });
});
