import type { PeerCertificate } from "node:tls";
import { describe, expect, it } from "vitest";
import { certificateLabels } from "../../../control/tls/node-identity.js";

function cert(subjectaltname: string | undefined): PeerCertificate {
  return { subjectaltname, subject: {} } as PeerCertificate;
}

describe("the labels a client certificate assigns", () => {
  it("reads each SAN URI agentcontrol://label/KEY=VALUE, decoded", () => {
    expect(
      certificateLabels(
        cert(
          "URI:agentcontrol://node/n-1, URI:agentcontrol://label/pool=edge, URI:agentcontrol://label/site=eu%2C1",
        ),
      ),
    ).toEqual({ ok: true, labels: { pool: "edge", site: "eu,1" } });
  });

  it("reads none from a certificate without label URIs", () => {
    expect(certificateLabels(cert("URI:agentcontrol://node/n-1"))).toEqual({
      ok: true,
      labels: {},
    });
    expect(certificateLabels(cert(undefined))).toEqual({ ok: true, labels: {} });
  });

  it.each([
    [
      "a key that is not a label key",
      "URI:agentcontrol://label/Bad%20Key=1",
      /not a valid label key/,
    ],
    ["no = sign", "URI:agentcontrol://label/pool", /KEY=VALUE/],
    ["a key given twice", "URI:agentcontrol://label/a=1, URI:agentcontrol://label/a=2", /twice/],
    ["a value over 256 characters", `URI:agentcontrol://label/a=${"x".repeat(257)}`, /256/],
  ])("refuses %s", (_name, text, problem) => {
    const read = certificateLabels(cert(text));
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toMatch(problem);
  });
});
