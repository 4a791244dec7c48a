/**
 * A gate endpoint cannot flood Control or send it elsewhere: a Prometheus answer is read to at
 * most 1 MiB, and no redirect is followed (a redirect answer is judged as it is).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpGateProbe, httpGateProbe } from "../../control/campaign-worker/gate-http.js";

const context = { campaignId: "c-1", batch: 0, gate: 0, targetVersion: "2.0.0" };
const passing = JSON.stringify({
  status: "success",
  data: { resultType: "vector", result: [{ metric: {}, value: [0, "1"] }] },
});

describe("hostile gate endpoints", { timeout: 60_000 }, () => {
  let server: Server;
  let base = "";
  let followed = 0;
  let streamed = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path.startsWith("/target")) {
        followed += 1;
        res.writeHead(200, { "content-type": "application/json" }).end(passing);
      } else if (path.startsWith("/redirect")) {
        res.writeHead(302, { location: `${base}/target/api/v1/query` }).end();
      } else if (path.startsWith("/huge")) {
        // An endless answer: Control must stop reading at its limit.
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"status":"success","data":{"resultType":"vector","result":[');
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (streamed < 64 * 1024 * 1024 && res.write(chunk)) streamed += chunk.length;
          if (streamed < 64 * 1024 * 1024) res.once("drain", pump);
          else res.end("]}}");
        };
        pump();
        req.on("close", () => res.destroy());
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("stops reading a Prometheus answer past 1 MiB and judges it unreachable", async () => {
    const outcome = await httpGateProbe.evaluate(
      { kind: "prometheus", url: `${base}/huge`, query: "up" },
      context,
      AbortSignal.timeout(30_000),
    );
    expect(outcome.status).toBe("unreachable");
    expect(outcome.message).toMatch(/larger than 1 MiB/);
    expect(streamed).toBeLessThan(16 * 1024 * 1024);
  });

  it("follows no redirect from Prometheus", async () => {
    const outcome = await httpGateProbe.evaluate(
      { kind: "prometheus", url: `${base}/redirect`, query: "up" },
      context,
      AbortSignal.timeout(10_000),
    );
    expect(outcome.status).toBe("unreachable");
    expect(outcome.message).toMatch(/redirect.*not followed/);
    expect(followed).toBe(0);
  });

  it("follows no redirect from a webhook: a redirect is not a success", async () => {
    const outcome = await httpGateProbe.evaluate(
      { kind: "webhook", url: `${base}/redirect` },
      context,
      AbortSignal.timeout(10_000),
    );
    expect(outcome.status).toBe("fail");
    expect(outcome.message).toMatch(/HTTP 302.*not followed/);
    expect(followed).toBe(0);
  });

  it("contacts no gate outside gates.allowedHosts, and judges one inside it", async () => {
    const port = new URL(base).port;
    const outside = createHttpGateProbe({ allowedHosts: ["prometheus.internal:9090"] });
    for (const gate of [
      { kind: "prometheus" as const, url: `${base}/target`, query: "up" },
      { kind: "webhook" as const, url: `${base}/target` },
    ]) {
      const outcome = await outside.evaluate(gate, context, AbortSignal.timeout(10_000));
      expect(outcome.status).toBe("unreachable");
      expect(outcome.message).toContain(`gate host 127.0.0.1:${port} is not in gates.allowedHosts`);
    }
    expect(followed).toBe(0);
    const inside = createHttpGateProbe({ allowedHosts: [`127.0.0.1:${port}`] });
    const outcome = await inside.evaluate(
      { kind: "prometheus", url: `${base}/target`, query: "up" },
      context,
      AbortSignal.timeout(10_000),
    );
    expect(outcome.status).toBe("pass");
    expect(followed).toBe(1);
  });
});
