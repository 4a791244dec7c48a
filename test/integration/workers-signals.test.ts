/**
 * The signals of `npm start -- --workers 2`, on real processes: the primary (leader of its
 * own process group, as systemd's control group holds it), two workers and the embedded
 * PostgreSQL.
 *
 * - SIGHUP to the primary (systemd's `ExecReload=/bin/kill -HUP $MAINPID`) re-reads the admin
 *   tokens file in every worker and says so in one JSON line; nothing stops.
 * - One scrape of the shared admin port answers for the whole group: a real Prometheus
 *   scraping it reads `agent_control_is_leader` 1 (a worker leads), every agent's stream
 *   (spread over both workers) and the fleet's nodes once, and the leadership alerts stay
 *   quiet; so does every scrape on a new connection, whichever worker takes it.
 * - SIGTERM to the whole group at once (systemd's default `KillMode=control-group`): every
 *   worker drains and logs `stopped`, none crashes on its channel to the primary, the
 *   database stops, the primary exits 0.
 * - An uncaught error in the primary stops the workers and then the database, and the
 *   primary exits 1: no path leaves the database running without its owner.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { type Prometheus, startPrometheus } from "../helpers/prometheus.js";
import {
  alive,
  type LogLine,
  listNodesStatus,
  startWorkers,
  type WorkersProcess,
} from "../helpers/workers-process.js";

const OPERATOR = "workers-signals-operator-0123456789";
const OLD = "ci-old-token-0123456789abcdef";
const NEW = "ci-new-token-0123456789abcdef";
const CALLS = 6;
const AGENTS = 6;
const ALERTS = resolve("docs/monitoring/alerts.yml");

const config = (tokensFile?: string) => ({
  ...(tokensFile ? { adminTokensFile: tokensFile } : {}),
  worker: { intervalMs: 200 },
  limits: { shutdownGraceSeconds: 1 },
});

/** One scrape of `/metrics` on a connection of its own (so scrapes in a row reach each worker). */
const scrapeOnce = (adminUrl: string) =>
  new Promise<string>((done, fail) => {
    const req = request(
      new URL("/metrics", adminUrl),
      { agent: false, headers: { connection: "close" } },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
        res.once("end", () => done(body));
      },
    );
    req.once("error", fail);
    req.end();
  });

/** The value of the series `series` (name and labels exactly as rendered), or undefined. */
const sample = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

/** Statuses of CALLS calls with `token`, each on its own connection (so every worker answers). */
const statuses = async (w: WorkersProcess, token: string) => {
  const out: number[] = [];
  for (let i = 0; i < CALLS; i++) out.push(await listNodesStatus(w.adminUrl, token));
  return out;
};
const fromPid = (w: WorkersProcess, pid: number, msg: string | RegExp) =>
  w
    .lines()
    .filter((l) => l.pid === pid && (typeof msg === "string" ? l.msg === msg : msg.test(l.msg)));

describe("--workers 2: SIGHUP, then SIGTERM to the whole process group", {
  timeout: 240_000,
}, () => {
  let dir = "";
  let tokensFile = "";
  let w: WorkersProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-workers-signals-"));
    tokensFile = join(dir, "admin-tokens.json");
    await writeFile(tokensFile, JSON.stringify([{ name: "ci-old", role: "viewer", token: OLD }]), {
      mode: 0o600,
    });
    w = await startWorkers({
      dir,
      workers: 2,
      config: config(tokensFile),
      env: { AGENT_CONTROL_ADMIN_TOKEN: OPERATOR },
    });
  }, 180_000);
  afterAll(async () => {
    if (w && w.child.exitCode === null && w.child.pid) {
      try {
        process.kill(-w.child.pid, "SIGKILL");
      } catch {}
    }
    const pg = w?.postgresPid();
    if (pg !== undefined && alive(pg)) process.kill(pg, "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("SIGHUP to the primary reloads the tokens in every worker and says so in one line; nothing stops", async () => {
    if (!w) throw new Error("not started");
    const primary = w.child.pid as number;
    const workers = w.started();
    expect(workers).toHaveLength(2);
    expect(await statuses(w, OLD)).toEqual(Array(CALLS).fill(200));
    expect(await statuses(w, NEW)).toEqual(Array(CALLS).fill(401));

    await writeFile(tokensFile, JSON.stringify([{ name: "ci-new", role: "viewer", token: NEW }]));
    process.kill(primary, "SIGHUP");
    const said = () => w?.lines().filter((l) => /admin tokens/.test(l.msg)) ?? [];
    await w.until("the reload said", 30_000, () => said().length > 0);
    // Time for any other line about it to arrive.
    await new Promise((r) => setTimeout(r, 1500));
    expect(said()).toHaveLength(1);
    const [line] = said() as [LogLine];
    expect(line.pid).toBe(primary);
    expect(line.msg).toBe("admin tokens reloaded in every worker");
    expect(line.signal).toBe("SIGHUP");
    expect([...(line.workers as number[])].sort()).toEqual([...workers].sort());
    expect(line.tokens).toEqual(["admin", "ci-new"]);

    expect(await statuses(w, NEW)).toEqual(Array(CALLS).fill(200));
    expect(await statuses(w, OLD)).toEqual(Array(CALLS).fill(401));
    expect(w.child.exitCode).toBeNull();
    expect(w.started()).toEqual(workers);
    for (const pid of workers) expect(alive(pid)).toBe(true);
  });

  it("one scrape of the shared admin port answers for both workers: Prometheus reads a leader, every stream and the fleet once, and the leadership alerts stay quiet", async () => {
    if (!w) throw new Error("not started");
    const nodes = createClient(
      NodeService,
      createConnectTransport({
        baseUrl: w.adminUrl,
        httpVersion: "1.1",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${OPERATOR}`);
            return next(req);
          },
        ],
      }),
    );
    let fleet: Fleet | undefined;
    let prometheus: Prometheus | undefined;
    try {
      fleet = await startFleet({
        server: w.agentAddress,
        joinToken: (await nodes.createJoinToken({})).secret,
        count: AGENTS,
      });
      await fleet.waitUntil((f) => f.welcomedCount() === AGENTS, 60_000, "fleet welcomed");
      // The streams are spread over both workers: no one worker's view holds them all.
      const held = async () =>
        new Set(
          (await nodes.listNodes({ pageSize: 100 })).nodes
            .filter((n) => n.online)
            .map((n) => /-(\d+)-[0-9a-f]+$/.exec(n.heldBy)?.[1]),
        );
      await w.until("nodes held by both workers", 30_000, async () => (await held()).size === 2);
      await w.until(
        "a worker leading",
        30_000,
        () => w?.lines().some((l) => l.msg === "leadership acquired") === true,
      );

      // Every scrape, whichever worker the connection reaches, answers for the group.
      for (let i = 0; i < CALLS; i++) {
        const text = await scrapeOnce(w.adminUrl);
        expect(sample(text, "agent_control_is_leader"), text).toBe(1);
        expect(sample(text, "agent_control_streams")).toBe(AGENTS);
        expect(sample(text, 'agent_control_nodes{online="true",enabled="true"}')).toBe(AGENTS);
        expect(sample(text, "agent_control_workers")).toBe(2);
        expect(sample(text, "agent_control_workers_scraped")).toBe(2);
      }

      const pdir = await mkdtemp(join(dir, "prometheus-"));
      prometheus = await startPrometheus(new URL(w.adminUrl).host, pdir, [ALERTS]);
      const p = prometheus;
      await p.settled('up{job="agent-control"}', (v) => v === 1);
      await p.settled("max(agent_control_is_leader)", (v) => v === 1);
      expect(await p.query("agent_control_is_leader")).toHaveLength(1);
      await p.settled("agent_control_streams", (v) => v === AGENTS);
      await p.settled('sum(agent_control_nodes{online="true"})', (v) => v === AGENTS);
      await p.settled('agent_control_handshakes_total{result="welcomed"}', (v) => v >= AGENTS);
      await p.settled("agent_control_workers_scraped", (v) => v === 2);
      // A few seconds of scrapes: the group leads in every one of them.
      await new Promise((r) => setTimeout(r, 5000));
      await p.settled("min_over_time(agent_control_is_leader[5s])", (v) => v === 1);
      const { alerts } = (await p.api("/api/v1/alerts")) as {
        alerts: { labels: { alertname: string }; state: string }[];
      };
      const raised = alerts.map((a) => `${a.labels.alertname} (${a.state})`);
      for (const quiet of ["AgentControlNoLeader", "AgentControlLeadershipLost"]) {
        expect(raised.filter((a) => a.startsWith(`${quiet} `))).toEqual([]);
      }
    } finally {
      await prometheus?.stop();
      await fleet?.stop();
    }
  });

  it("SIGTERM to the primary, its workers and the database together: every worker drains, the database stops, exit 0", async () => {
    if (!w?.child.pid) throw new Error("no primary (the test before failed)");
    const workers = w.started();
    const postgres = w.postgresPid();
    expect(postgres).toBeDefined();
    process.kill(-w.child.pid, "SIGTERM");
    const exit = await w.exited;
    const output = `\n${w.stderr()}`;
    expect(exit, output).toEqual({ code: 0, signal: null });
    for (const pid of workers) {
      expect(alive(pid)).toBe(false);
      const said = JSON.stringify(
        w
          .lines()
          .filter((l) => l.pid === pid)
          .slice(-5),
        null,
        1,
      );
      expect(fromPid(w, pid, "stopped"), `worker ${pid}: ${said}${output}`).toHaveLength(1);
    }
    expect(w.stderr()).not.toMatch(/EPIPE|ERR_IPC|Error|Warning/);
    expect(alive(postgres as number)).toBe(false);
    expect(w.postgresPid()).toBeUndefined();
  });
});

describe("--workers 2: an uncaught error in the primary", { timeout: 240_000 }, () => {
  let dir = "";
  let w: WorkersProcess | undefined;
  afterEach(async () => {
    if (w && w.child.exitCode === null && w.child.pid) {
      try {
        process.kill(-w.child.pid, "SIGKILL");
      } catch {}
    }
    const pg = w?.postgresPid();
    if (pg !== undefined && alive(pg)) process.kill(pg, "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("stops the workers, then the database, logs the error and exits 1", async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-workers-fault-"));
    const trigger = join(dir, "fault-now");
    w = await startWorkers({
      dir,
      workers: 2,
      config: config(),
      env: { AGENT_CONTROL_ADMIN_TOKEN: OPERATOR, AGENT_CONTROL_TEST_PRIMARY_FAULT: trigger },
      nodeFlags: ["--import", "./test/helpers/primary-fault.mjs"],
    });
    const workers = w.started();
    const postgres = w.postgresPid();
    expect(postgres).toBeDefined();
    await writeFile(trigger, "");
    const exit = await w.exited;
    expect(exit, w.stderr()).toEqual({ code: 1, signal: null });
    const primary = w.child.pid as number;
    const fatal = fromPid(w, primary, /uncaught error/);
    expect(fatal).toHaveLength(1);
    expect(JSON.stringify(fatal[0])).toContain("planted fault");
    for (const pid of workers) {
      expect(alive(pid)).toBe(false);
      expect(fromPid(w, pid, "stopped"), `worker ${pid}`).toHaveLength(1);
    }
    expect(alive(postgres as number)).toBe(false);
    expect(w.postgresPid()).toBeUndefined();
  });
});

describe("--workers 2: a primary killed outright", { timeout: 240_000 }, () => {
  let dir = "";
  let w: WorkersProcess | undefined;
  afterEach(async () => {
    if (w?.child.pid) {
      try {
        process.kill(-w.child.pid, "SIGKILL");
      } catch {}
    }
    const pg = w?.postgresPid();
    if (pg !== undefined && alive(pg)) process.kill(pg, "SIGKILL");
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("leaves workers that drain and exit by themselves, none crashing on a write to the broken channel", async () => {
    dir = await mkdtemp(join(tmpdir(), "agent-control-workers-orphan-"));
    const trigger = join(dir, "late-write-now");
    w = await startWorkers({
      dir,
      workers: 2,
      config: config(),
      env: { AGENT_CONTROL_ADMIN_TOKEN: OPERATOR, AGENT_CONTROL_TEST_WORKER_LATE_WRITE: trigger },
      nodeFlags: ["--import", "./test/helpers/worker-late-write.mjs"],
    });
    const workers = w.started();
    // Both workers hold their event loop for 1.5 s, then write to the primary, dead by then.
    await writeFile(trigger, "");
    await new Promise((r) => setTimeout(r, 500));
    process.kill(w.child.pid as number, "SIGKILL");
    await w.exited;
    await w.until("the workers gone", 60_000, () => workers.every((pid) => !alive(pid)));
    // Their last lines come through the pipe they shared with the primary.
    await new Promise((r) => setTimeout(r, 500));
    for (const pid of workers) {
      const said = w
        .lines()
        .filter((l) => l.pid === pid)
        .slice(-6);
      expect(
        fromPid(w, pid, "stopped"),
        `worker ${pid}: ${JSON.stringify(said)}\n${w.stderr()}`,
      ).toHaveLength(1);
    }
    expect(w.stderr()).not.toMatch(/EPIPE|ERR_IPC|Error/);
    for (const pid of workers) {
      const gone = fromPid(w, pid, /^the channel to the primary is gone|^shutting down/);
      expect(gone.length, `worker ${pid}`).toBeGreaterThan(0);
    }
  });
});
