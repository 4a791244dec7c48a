/**
 * `npm run bench -- --downloads [--agents 2000] [--size-mb 20] [--max-downloads 64]`: the
 * bandwidth scenario, run alone. A real Control (embedded PostgreSQL, its own downloads
 * listener) and simulated agents that each fetch and check the artifact themselves (the
 * fleet's shared download is off: a fleet of hosts fetches once per host) run two campaigns
 * over every agent, one batch of 100 %, `--max-downloads N`:
 *
 * 1. to a release Control serves (`/downloads/agent/{version}/{platform}`, streamed from
 *    PostgreSQL);
 * 2. to a release whose signed manifest names a plain HTTP mirror (nginx when installed, else
 *    a Node.js `http` static server; `mirror-process.ts`), which Control never proxies.
 *
 * For each: the wall time from the start to `completed`, Control's CPU seconds (and per
 * second: median, p90, max), Control's resident memory (before, and peak, sampled every
 * 500 ms), and the mirror's CPU. Prints a Markdown table and writes
 * `reports/bench/downloads.json` (`downloads-report.ts`); `docs/BENCHMARKS.md` records the figures by hand (its
 * generated table belongs to the full run).
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { freePort } from "../../control/db/embedded-postgres.js";
import {
  CampaignPhase,
  CampaignService,
  CampaignSpecSchema,
} from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { agentctl } from "../demo/agentctl.js";
import { CAMPAIGN_POLICY } from "./campaign.js";
import { type BenchControl, startBenchControl } from "./control.js";
import type { DownloadsMeasure, DownloadsPlan } from "./downloads-report.js";
import { type MirrorProcess, startMirrorProcess } from "./mirror-process.js";
import { cpuSeconds, vmRssBytes } from "./proc-stats.js";
import { type SimProcess, sleep, startSimProcesses } from "./processes.js";
import { median, percentile } from "./stats.js";

type Say = (text: string) => void;

const MB = 1024 * 1024;

/** Control's `agent_control_downloads_total{status="200"}`, read from its /metrics. */
async function controlFetches(control: BenchControl): Promise<number | undefined> {
  try {
    const text = await (
      await fetch(`http://${control.adminAddr}/metrics`, {
        headers: { authorization: `Bearer ${control.ctlEnv.AGENTCTL_TOKEN}` },
      })
    ).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith('agent_control_downloads_total{status="200"'));
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  } catch {
    return undefined;
  }
}

async function ctl(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
  const result = await agentctl(args, { env, quiet: true });
  if (result.code !== 0) throw new Error(`agentctl ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** Signs two releases over one artifact: 2.0.0 served by Control, 3.0.0 from `mirrorUrl`. */
async function prepare(dir: string, sizeBytes: number, mirrorUrl: string) {
  const root = join(dir, "release");
  const www = join(dir, "www");
  await mkdir(root, { recursive: true });
  await mkdir(www, { recursive: true });
  const key = join(root, "bench.key");
  await ctl(["release", "keygen", "--out", key]);
  const pin = (await readFile(`${key}.pub`, "utf8")).trim();
  const artifact = join(root, "agent-linux-amd64");
  const bytes = randomBytes(sizeBytes);
  await writeFile(artifact, bytes);
  await writeFile(join(www, "agent-linux-amd64"), bytes);
  const envelopes: string[] = [];
  for (const [version, sequence, base] of [
    ["2.0.0", "2", undefined],
    ["3.0.0", "3", mirrorUrl],
  ] as const) {
    const manifest = join(root, `manifest-${version}.json`);
    const envelope = join(root, `release-${version}.json`);
    await ctl([
      "release",
      "manifest",
      "--version",
      version,
      "--sequence",
      sequence,
      "--artifact",
      `linux-amd64=${artifact}`,
      ...(base === undefined ? [] : ["--url-base", base]),
      "--out",
      manifest,
    ]);
    await ctl(["release", "sign", "--key", key, "--in", manifest, "--out", envelope]);
    envelopes.push(envelope);
  }
  return { pin, root, www, envelopes };
}

/**
 * Leaves no campaign unfinished and no desired version: a completed campaign makes its target
 * the desired version, and convergence would take the nodes that failed into a campaign of its
 * own, busy for the next measured one. Gives up after a minute.
 */
async function quiesce(
  control: BenchControl,
  campaigns: ReturnType<typeof createClient<typeof CampaignService>>,
): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const desired = JSON.parse(await ctl(["desired", "list", "--json"], control.ctlEnv)) as {
      desiredVersions?: { id: string }[];
    };
    for (const d of desired.desiredVersions ?? [])
      await ctl(["desired", "clear", d.id, "--yes"], control.ctlEnv);
    const open = (await campaigns.listCampaigns({})).campaigns.filter(
      (c) => c.finishedAt === undefined,
    );
    if (open.length === 0 && (desired.desiredVersions ?? []).length === 0) return;
    for (const c of open) await campaigns.abortCampaign({ id: c.id }).catch(() => undefined);
    await sleep(1000);
  }
}

/** Runs one campaign to `version` and measures it. */
async function measureCampaign(
  control: BenchControl,
  version: string,
  plan: DownloadsPlan,
  mirror: MirrorProcess | undefined,
  source: string,
  say: Say,
): Promise<DownloadsMeasure> {
  const bearer: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${control.ctlEnv.AGENTCTL_TOKEN}`);
    return next(req);
  };
  const campaigns = createClient(
    CampaignService,
    createConnectTransport({
      baseUrl: `http://${control.adminAddr}`,
      httpVersion: "1.1",
      interceptors: [bearer],
    }),
  );
  await quiesce(control, campaigns);
  const pid = control.pid();
  const rssBefore = await vmRssBytes(pid);
  const cpuBefore = await cpuSeconds(pid);
  const mirrorBefore = (await mirror?.cpuSeconds()) ?? 0;
  const fetchesBefore = mirror ? await mirror.fetches() : await controlFetches(control);
  let rssPeak = rssBefore;
  let mirrorRssPeak = 0;
  const cores: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    let last = cpuBefore;
    let lastAt = Date.now();
    while (sampling) {
      await sleep(500);
      try {
        rssPeak = Math.max(rssPeak, await vmRssBytes(pid));
        if (mirror) mirrorRssPeak = Math.max(mirrorRssPeak, await mirror.rssBytes());
        if (Date.now() - lastAt >= 1000) {
          const now = await cpuSeconds(pid);
          cores.push((now - last) / ((Date.now() - lastAt) / 1000));
          last = now;
          lastAt = Date.now();
        }
      } catch {
        return; // the process is gone: the run is ending
      }
    }
  })();
  try {
    return await runOne();
  } finally {
    sampling = false;
    await sampler;
  }

  async function runOne(): Promise<DownloadsMeasure> {
    say(`downloads: campaign to ${version} (${source}), --max-downloads ${plan.maxDownloads}`);
    const startedAt = Date.now();
    const started = await campaigns.startCampaign({
      spec: create(CampaignSpecSchema, {
        targetVersion: version,
        batches: [{ percent: 100, minDuration: durationFromMs(0) }],
        // A benchmark measures the downloads: failures are counted, never acted on.
        failureThresholdPercent: 100,
        concurrency: 0,
        disruptionBudgetPercent: 100,
        configGrace: durationFromMs(0),
        maxDownloads: plan.maxDownloads,
        reason: "downloads benchmark",
      }),
    });
    const id = started.campaign?.id ?? "";
    let phase = started.campaign?.phase ?? CampaignPhase.UNSPECIFIED;
    const deadline = startedAt + plan.timeoutMs;
    let finished = false;
    while (Date.now() < deadline && !finished) {
      await sleep(1000);
      const c = (await campaigns.getCampaign({ id, summaryOnly: true })).campaign;
      phase = c?.phase ?? phase;
      finished = c?.finishedAt !== undefined;
    }
    const seconds = (Date.now() - startedAt) / 1000;
    sampling = false;
    const failures = new Map<string, number>();
    const messages = new Set<string>();
    for (const n of (await campaigns.getCampaign({ id })).nodes) {
      const code = /: (download_\w+|sha256_mismatch|artifact_too_large)/.exec(n.message)?.[1];
      if (n.code !== "" && n.code !== "already_current") {
        failures.set(code ?? n.code, (failures.get(code ?? n.code) ?? 0) + 1);
        if (messages.size < 8) messages.add(n.message.replace(/GET \S+: /, "GET: "));
      }
    }
    const cpu = (await cpuSeconds(pid)) - cpuBefore;
    const mirrorCpu = mirror ? (await mirror.cpuSeconds()) - mirrorBefore : undefined;
    const completed = phase === CampaignPhase.COMPLETED;
    const fetchesAfter = mirror ? await mirror.fetches() : await controlFetches(control);
    const fetches =
      fetchesBefore === undefined || fetchesAfter === undefined
        ? undefined
        : fetchesAfter - fetchesBefore;
    say(
      `downloads: ${version} ${completed ? "completed" : `ended ${CampaignPhase[phase]}`} in ${seconds.toFixed(1)} s; Control ${cpu.toFixed(1)} CPU s, peak RSS ${(rssPeak / MB).toFixed(0)} MB`,
    );
    for (const m of messages) say(`downloads: failed: ${m}`);
    return {
      source,
      completed,
      seconds,
      controlCpuSeconds: cpu,
      controlCores: {
        median: median(cores),
        p90: percentile(cores, 90),
        max: Math.max(0, ...cores),
      },
      controlRssBeforeMb: rssBefore / MB,
      controlRssPeakMb: rssPeak / MB,
      mirrorCpuSeconds: mirrorCpu,
      mirrorRssPeakMb: mirror ? mirrorRssPeak / MB : undefined,
      gigabytes: (plan.agents * plan.sizeBytes) / 1e9,
      fetches,
      failures: Object.fromEntries(failures),
      failureMessages: [...messages],
    };
  }
}

/** Runs the whole scenario in a fresh temporary folder; returns both measures. */
export async function runDownloadsBench(
  plan: DownloadsPlan,
  say: Say,
): Promise<DownloadsMeasure[]> {
  const dir = await mkdtemp(join(tmpdir(), "agent-control-downloads-"));
  // The embedded PostgreSQL runs as another user when Control runs as root: it must enter here.
  await chmod(dir, 0o755);
  const sims: SimProcess[] = [];
  let control: BenchControl | undefined;
  let mirror: MirrorProcess | undefined;
  try {
    await mkdir(join(dir, "mirror"), { recursive: true });
    // The mirror's URL is signed into the 3.0.0 manifest before the mirror serves the file.
    const mirrorPort = await freePort();
    const release = await prepare(dir, plan.sizeBytes, `http://127.0.0.1:${mirrorPort}`);
    mirror = await startMirrorProcess(release.www, join(dir, "mirror"), mirrorPort);
    say(`downloads: mirror ${mirror.kind} at ${mirror.url}`);
    const downloadsAddr = `127.0.0.1:${await freePort()}`;
    await mkdir(join(dir, "control"), { recursive: true });
    control = await startBenchControl(
      join(dir, "control"),
      {
        timeouts: { heartbeatSeconds: 10 },
        policy: CAMPAIGN_POLICY,
        // Every simulated agent enrolls with the one join token: its handshakes are not measured.
        limits: { handshakesPerCredential: 1_000_000 },
      },
      { AGENT_CONTROL_RELEASE_PINS: release.pin, AGENT_CONTROL_DOWNLOADS_ADDR: downloadsAddr },
    );
    const [served, mirrored] = release.envelopes as [string, string];
    await ctl(["release", "register", served, "--artifacts", release.root], control.ctlEnv);
    await ctl(["release", "register", mirrored], control.ctlEnv);
    const token = await control.joinToken();
    say(`downloads: ${plan.agents} agents in ${plan.simulators} simulators`);
    await startSimProcesses(
      sims,
      plan.agents,
      plan.simulators,
      (i, count) => ({
        server: control?.agentAddr ?? "",
        joinToken: token,
        count,
        idPrefix: `dl${i}`,
        seed: i + 1,
        pins: [release.pin],
        restartMs: [0, 0],
        shareDownloads: false,
        connectRate: 500,
      }),
      (i) => join(dir, `sim-${i}.log`),
    );
    await Promise.all(
      sims.map((sim, i) =>
        sim.waitFor(
          (c) =>
            c.welcomed >=
            Math.floor(plan.agents / plan.simulators) + (i < plan.agents % plan.simulators ? 1 : 0),
          120_000,
          "the fleet welcomed",
        ),
      ),
    );
    await sleep(3000);
    const out: DownloadsMeasure[] = [];
    out.push(
      await measureCampaign(control, "2.0.0", plan, undefined, "Control's downloads listener", say),
    );
    out.push(await measureCampaign(control, "3.0.0", plan, mirror, mirror.kind, say));
    return out;
  } finally {
    await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
    await control?.stop().catch(() => undefined);
    await mirror?.stop().catch(() => undefined);
    if (process.env.AGENT_CONTROL_BENCH_KEEP === "1") say(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}
