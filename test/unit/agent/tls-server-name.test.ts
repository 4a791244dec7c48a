import { describe, expect, it } from "vitest";
import { IP_SERVER_NAME, serverIp, serverNameOptions } from "../../../agent/core/tls.js";

describe("the TLS server name of the agent stream", () => {
  it.each([
    ["127.0.0.1:7443", "127.0.0.1"],
    ["10.1.2.3:443", "10.1.2.3"],
    ["[::1]:7443", "::1"],
    ["[fd00::5]:7443", "fd00::5"],
    ["control.example:7443", undefined],
    ["localhost:7443", undefined],
  ])("%s is dialled by IP address: %s", (server, ip) => {
    expect(serverIp(server)).toBe(ip);
  });

  it("overrides the server name only for an IP address, with a name that is not one", () => {
    expect(serverNameOptions("127.0.0.1:7443")).toEqual({
      "grpc.ssl_target_name_override": IP_SERVER_NAME,
    });
    expect(serverNameOptions("control.example:7443")).toEqual({});
    expect(IP_SERVER_NAME).toMatch(/\.invalid$/);
  });
});
