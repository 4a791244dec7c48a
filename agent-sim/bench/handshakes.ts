/**
 * Handshake rate: a burst of agents connecting at once to a server that is already up,
 * timed from the first connection to the last Welcome. Against Control it runs twice:
 * new agents enrolling with a join token, then the same agents coming back with their
 * node tokens (every reconnect after an upgrade pays that second cost).
 */
import { join } from "node:path";
import type { FleetOptions } from "../fleet-options.js";
import { cpuSeconds } from "./proc-stats.js";
import { startSimProcess, waitWelcomed } from "./processes.js";
import type { BenchRow } from "./rows.js";
import type { Target } from "./target.js";

/** One burst's figures. */
export interface HandshakeBurst {
  readonly agents: number;
  /** First connection opened until every agent is welcomed. */
  readonly seconds: number;
  /** Agents welcomed per second over the burst. */
  readonly perSecond: number;
  /** Streams opened, refused ones and retries included. */
  readonly attempts: number;
  /** CPU (user + system) the server spent per welcomed agent over the burst. */
  readonly cpuMsPerHandshake: number;
}

/** How a burst runs. */
export interface HandshakePlan {
  readonly agents: number;
  /** Simulator processes sharing the burst (the simulators must not be what limits it). */
  readonly simulators: number;
  /** New connections per second per simulator. */
  readonly connectRate: number;
  readonly timeoutMs: number;
  readonly logDir: string;
  /** Keeps each agent's identity here, so a second burst comes back with node tokens. */
  readonly stateDir?: string;
  /** Distinguishes the node ids and logs of separate bursts. */
  readonly label: string;
}

/**
 * Connects `plan.agents` agents to `target` at once, waits until all are welcomed, and
 * stops them (their streams close). Welcomes are timed from the simulators' side.
 */
export async function handshakeBurst(target: Target, plan: HandshakePlan): Promise<HandshakeBurst> {
  const per = Math.ceil(plan.agents / plan.simulators);
  const sims = await Promise.all(
    Array.from({ length: plan.simulators }, (_, index) => {
      const options: FleetOptions = {
        server: target.server,
        joinToken: target.joinToken,
        count: Math.min(per, plan.agents - index * per),
        seed: index + 1,
        idPrefix: `${target.name}-hs${index}`,
        connectRate: plan.connectRate,
        download: false,
        ...(plan.stateDir === undefined ? {} : { stateDir: plan.stateDir }),
      };
      const log = join(plan.logDir, `sim-${target.name}-${plan.label}-${index}.log`);
      return startSimProcess(options, log, false, true);
    }),
  );
  try {
    const cpuBefore = await cpuSeconds(target.pid());
    const started = performance.now();
    await Promise.all(sims.map((sim) => sim.start()));
    await waitWelcomed(sims, plan.agents, plan.timeoutMs, `${plan.agents} handshakes`);
    const seconds = (performance.now() - started) / 1000;
    const cpu = (await cpuSeconds(target.pid())) - cpuBefore;
    const counts = await Promise.all(sims.map((sim) => sim.counts()));
    return {
      agents: plan.agents,
      seconds,
      perSecond: plan.agents / seconds,
      attempts: counts.reduce((n, c) => n + c.connects, 0),
      cpuMsPerHandshake: (cpu * 1000) / plan.agents,
    };
  } finally {
    await Promise.all(sims.map((sim) => sim.stop()));
  }
}

/** Control's bursts (enrolling, then coming back with node tokens) and the baseline's. */
export interface HandshakeResults {
  readonly enrol: HandshakeBurst;
  readonly reconnect: HandshakeBurst;
  readonly bare: HandshakeBurst;
}

/**
 * Rows of the handshake scenario: welcomed per second of each Control burst against the
 * bare server's (goal ≥ 0.5×; quick mode fails below `minRatio`), and the CPU each costs.
 */
export function handshakeRows(results: HandshakeResults, minRatio: number): BenchRow[] {
  const { bare } = results;
  const rows: BenchRow[] = [];
  for (const [what, burst] of [
    ["new agents enrolling with a join token", results.enrol],
    ["agents coming back with their node tokens", results.reconnect],
  ] as const) {
    const rate = burst.perSecond / bare.perSecond;
    rows.push({
      scenario: `handshakes: ${what}, welcomed per second`,
      n: burst.agents,
      unit: "agents/s",
      project: burst.perSecond,
      baseline: bare.perSecond,
      baselineName: "bare grpc-js, same burst",
      ratio: rate,
      goal: "≥ 0.5×",
      met: rate >= 0.5,
      minRatio,
      note: `all welcomed in ${burst.seconds.toFixed(1)} s vs ${bare.seconds.toFixed(1)} s; ${burst.attempts} streams opened vs ${bare.attempts}`,
    });
    rows.push({
      scenario: `handshakes: ${what}, server CPU per welcomed agent`,
      n: burst.agents,
      unit: "ms CPU/agent",
      project: burst.cpuMsPerHandshake,
      baseline: bare.cpuMsPerHandshake,
      baselineName: "bare grpc-js, same burst",
      ratio: burst.cpuMsPerHandshake / bare.cpuMsPerHandshake,
      goal: "reported",
      met: undefined,
    });
  }
  return rows;
}
