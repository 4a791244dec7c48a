/**
 * The worker's gate runner on the memory store and the manual clock: what it evaluates, when,
 * how a slow gate is cut short by the Clock's timeout, and the HTTP probe against real servers.
 */
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CampaignState,
  createCampaign,
  type Gate,
  type GateOutcome,
  planCampaign,
  resolveSpec,
} from "../../../control/campaign/index.js";
import { MemoryCampaignStore } from "../../../control/campaign-store/index.js";
import { httpGateProbe } from "../../../control/campaign-worker/gate-http.js";
import { type GateContext, GateRunner } from "../../../control/campaign-worker/gate-runner.js";
import { createLogger } from "../../../control/log.js";
import { ManualClock } from "../../../control/manual-clock.js";

const gates: Gate[] = [
  { kind: "webhook", url: "http://a" },
  { kind: "webhook", url: "http://b" },
];

async function setup(answer: (g: GateContext, signal: AbortSignal) => Promise<GateOutcome>) {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCampaignStore(clock);
  const spec = resolveSpec({ targetVersion: "2.0.0", gates, gateGraceMs: 60_000 });
  const candidate = {
    id: "n1",
    labels: {},
    pool: "",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
  };
  const { campaign, nodes } = createCampaign({
    id: "c1",
    spec,
    plan: planCampaign(spec, [candidate]),
    target: { version: "2.0.0", sequence: 2 },
    now: clock.ms,
  });
  await store.transaction((tx) =>
    tx.insertCampaign({ campaign, nodes, createdBy: "t", createdByIp: "", now: clock.now() }),
  );
  const asked: GateContext[] = [];
  const stored: string[] = [];
  const runner = new GateRunner({
    store,
    clock,
    probe: {
      evaluate: (_gate, context, signal) => {
        asked.push(context);
        return answer(context, signal);
      },
    },
    log: createLogger({ level: "silent" }),
    intervalMs: 5000,
    timeoutMs: 2000,
    stored: (id) => stored.push(id),
  });
  const settled: CampaignState = {
    ...campaign,
    batches: campaign.batches.map((b) => ({ ...b, settledAt: clock.ms })),
  };
  const read = () => store.transaction((tx) => tx.readGateResults("c1", 0));
  return { clock, store, runner, campaign, settled, asked, stored, read };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("the gate runner", () => {
  it("evaluates nothing until the batch settled, then every gate at once and again after the interval", async () => {
    const s = await setup(async () => ({ status: "pass", value: "HTTP 200", message: "ok" }));
    s.runner.want("c1", s.campaign, s.clock.ms);
    s.runner.tick(s.clock.ms);
    expect(s.asked).toEqual([]);
    s.runner.want("c1", s.settled, s.clock.ms);
    s.runner.tick(s.clock.ms);
    await flush();
    expect(s.asked.map((a) => a.gate)).toEqual([0, 1]);
    expect((await s.read()).map((r) => `${r.gate}:${r.status}`)).toEqual(["0:pass", "1:pass"]);
    expect(s.stored).toEqual(["c1", "c1"]);
    expect(s.runner.nextDue).toBe(s.clock.ms + 5000);
    s.runner.tick(s.clock.ms + 4999);
    expect(s.asked).toHaveLength(2);
    s.clock.advance(5000);
    s.runner.tick(s.clock.ms);
    await flush();
    expect(s.asked).toHaveLength(4);
  });

  it("stores a gate that does not answer within the timeout as unreachable, aborting its request", async () => {
    let aborted = false;
    const s = await setup(
      (_c, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            reject(signal.reason);
          });
        }),
    );
    s.runner.want("c1", s.settled, s.clock.ms);
    s.runner.tick(s.clock.ms);
    await flush();
    expect(await s.read()).toEqual([]);
    s.clock.advance(2000);
    await flush();
    await flush();
    expect(aborted).toBe(true);
    const results = await s.read();
    expect(results.map((r) => r.status)).toEqual(["unreachable", "unreachable"]);
    expect(results[0]?.message).toContain("no answer within 2000 ms");
  });

  it("stops evaluating a campaign that is no longer soaking, and stores nothing it was evaluating", async () => {
    let release: (o: GateOutcome) => void = () => {};
    const s = await setup(() => new Promise((r) => (release = r)));
    s.runner.want("c1", s.settled, s.clock.ms);
    s.runner.tick(s.clock.ms);
    s.runner.want("c1", undefined, s.clock.ms);
    release({ status: "fail", value: "x", message: "late" });
    await flush();
    expect(await s.read()).toEqual([]);
    expect(s.runner.nextDue).toBeUndefined();
  });
});

describe("the HTTP gate probe", () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });
  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const a = server.address();
    return `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
  }
  const context = { campaignId: "c1", batch: 0, gate: 0, targetVersion: "2.0.0" };

  it("posts the campaign to a webhook and holds on 2xx, fails on anything else", async () => {
    const bodies: string[] = [];
    let code = 204;
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        bodies.push(`${req.method} ${body}`);
        res.statusCode = code;
        res.end();
      });
    });
    const gate: Gate = { kind: "webhook", url };
    const signal = new AbortController().signal;
    expect((await httpGateProbe.evaluate(gate, context, signal)).status).toBe("pass");
    code = 503;
    expect(await httpGateProbe.evaluate(gate, context, signal)).toMatchObject({
      status: "fail",
      value: "HTTP 503",
    });
    expect(bodies[0]).toBe(
      `POST ${JSON.stringify(context)}`.replace('"batch":0,"gate":0', '"batch":1,"gate":1'),
    );
  });

  it("numbers batches and gates from 1 in the webhook's body, as agentctl and the audit log do", async () => {
    const bodies: unknown[] = [];
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        bodies.push(JSON.parse(body));
        res.end();
      });
    });
    const signal = new AbortController().signal;
    await httpGateProbe.evaluate(
      { kind: "webhook", url },
      { campaignId: "c7", batch: 2, gate: 1, targetVersion: "2.0.0" },
      signal,
    );
    expect(bodies).toEqual([{ campaignId: "c7", batch: 3, gate: 2, targetVersion: "2.0.0" }]);
  });

  it("asks Prometheus's query API and judges the answer; an answer without JSON is unreachable", async () => {
    const url = await serve((req, res) => {
      const q = new URL(req.url ?? "", "http://x").searchParams.get("query");
      if (q === "broken") {
        res.statusCode = 502;
        res.end("bad gateway");
        return;
      }
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          status: "success",
          data: {
            resultType: "vector",
            result: [{ metric: {}, value: [0, q === "up" ? "1" : "0"] }],
          },
        }),
      );
    });
    const signal = new AbortController().signal;
    const prom = (query: string): Gate => ({ kind: "prometheus", url, query, op: "==", value: 1 });
    expect((await httpGateProbe.evaluate(prom("up"), context, signal)).status).toBe("pass");
    expect((await httpGateProbe.evaluate(prom("down"), context, signal)).status).toBe("fail");
    expect(await httpGateProbe.evaluate(prom("broken"), context, signal)).toMatchObject({
      status: "unreachable",
      value: "HTTP 502",
    });
  });
});
