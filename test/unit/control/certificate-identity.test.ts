import type { PeerCertificate } from "node:tls";
import { describe, expect, it } from "vitest";
import { nodeOfCertificate } from "../../../control/tls/node-identity.js";

/** A verified peer certificate as Node.js describes it, reduced to what names a node. */
function cert(subjectaltname: string | undefined, cn?: string): PeerCertificate {
  return { subjectaltname, subject: cn === undefined ? {} : { CN: cn } } as PeerCertificate;
}

describe("the node a client certificate names", () => {
  it.each([
    ["a SAN URI, whatever the CN says", cert("URI:agentcontrol://node/n-1", "other"), {}, "n-1"],
    [
      "a SAN DNS name under the configured suffix",
      cert("DNS:web-7.nodes.example.com", "other"),
      { dnsSuffix: "nodes.example.com" },
      "web-7",
    ],
    [
      "the SAN URI over a DNS name",
      cert("DNS:web-7.nodes.example.com, URI:agentcontrol://node/n-2"),
      { dnsSuffix: "nodes.example.com" },
      "n-2",
    ],
    ["the CN only when configured", cert(undefined, "cn-node"), { commonName: true }, "cn-node"],
  ])("is %s", (_name, certificate, identity, nodeId) => {
    expect(nodeOfCertificate(certificate, identity)).toMatchObject({ ok: true, nodeId });
  });

  it.each([
    ["a CN without the CN form configured", cert(undefined, "cn-node"), {}],
    ["a DNS name without a configured suffix", cert("DNS:web-7.nodes.example.com"), {}],
    [
      "a DNS name under another suffix",
      cert("DNS:web-7.evil.example.com"),
      { dnsSuffix: "nodes.example.com" },
    ],
    [
      "two DNS names under the suffix",
      cert("DNS:a.nodes.example.com, DNS:b.nodes.example.com"),
      { dnsSuffix: "nodes.example.com" },
    ],
  ])("is none for %s", (_name, certificate, identity) => {
    expect(nodeOfCertificate(certificate, identity).ok).toBe(false);
  });
});

describe("enrollment.certificateIdentity", () => {
  it("reads the DNS suffix and the CN form, and names a bad suffix", async () => {
    const { loadConfig, ConfigError } = await import("../../../control/config.js");
    const config = loadConfig({
      env: {},
      overrides: {
        databaseUrl: "postgres://x@localhost/x",
        enrollment: { certificateIdentity: { dnsSuffix: "nodes.example.com", commonName: true } },
      },
    });
    expect(config.enrollment.certificateIdentity).toEqual({
      dnsSuffix: "nodes.example.com",
      commonName: true,
    });
    expect(() =>
      loadConfig({
        env: {},
        overrides: {
          databaseUrl: "postgres://x@localhost/x",
          enrollment: { certificateIdentity: { dnsSuffix: "bad suffix!" } },
        },
      }),
    ).toThrow(ConfigError);
  });
});
