/**
 * A diagnosis tool behind the rollout figure (not part of `npm run bench`): the pure decision
 * over one large running batch, judged in full and incrementally (`DecideInput.judgedSince`),
 * in this process, with no database. `--nodes` nodes in one batch, `--in-flight` of them
 * offered; then each measured decision sees `--changed` of them report progress, and the
 * median of `--repeats` decisions of each kind is printed (the two decisions are checked equal).
 *
 * Usage: `npx tsx agent-sim/bench/judge-probe.ts [--nodes 10000] [--in-flight 7500] [--changed 100] [--repeats 30]`
 */
import { parseArgs } from "node:util";
import {
  applyDecision,
  type CampaignNode,
  type CampaignState,
  type Candidate,
  createCampaign,
  type DecideInput,
  decide,
  type JudgedMark,
  type NodeFacts,
  type ObservedPhase,
  operationId,
  planCampaign,
  resolveSpec,
} from "../../control/campaign/index.js";
import { median } from "./stats.js";

const TARGET = { version: "2.0.0", sequence: 2 };

function main(): void {
  const { values } = parseArgs({
    options: {
      nodes: { type: "string", default: "10000" },
      "in-flight": { type: "string", default: "7500" },
      changed: { type: "string", default: "100" },
      repeats: { type: "string", default: "30" },
    },
    strict: true,
  });
  const count = Number(values.nodes);
  const inFlight = Number(values["in-flight"]);
  const changedPer = Number(values.changed);
  const repeats = Number(values.repeats);
  const candidates: Candidate[] = Array.from({ length: count }, (_, i) => ({
    id: `n${i}`,
    labels: {},
    pool: "",
    enabled: true,
    everConnected: true,
    capabilities: ["upgrade.v1"],
    agentVersion: "1.0.0",
  }));
  const spec = resolveSpec({
    targetVersion: TARGET.version,
    batches: [{ percent: 100, minDurationMs: 0 }],
    concurrency: inFlight,
    disruptionBudgetPercent: 100,
    reconnectTimeoutMs: 3_600_000,
  });
  const created = createCampaign({
    id: "probe",
    spec,
    plan: planCampaign(spec, candidates),
    target: TARGET,
    now: 0,
  });
  let campaign: CampaignState = created.campaign;
  let nodes: CampaignNode[] = created.nodes;
  const facts = new Map<string, NodeFacts>(
    candidates.map((c) => [
      c.id,
      {
        nodeId: c.id,
        online: true,
        offline: false,
        disabled: false,
        bootId: `${c.id}-0`,
        agentVersion: c.agentVersion,
        capabilities: c.capabilities,
        lastHeartbeatAt: 0,
        reports: [],
        configFailures: [],
        sendFailures: [],
      },
    ]),
  );
  let now = 1000;
  const first = decide({ campaign, nodes, facts, now, target: TARGET });
  ({ campaign, nodes } = applyDecision(campaign, nodes, first));
  let mark: JudgedMark | undefined = first.judged;
  const offered = nodes.filter((n) => n.state === "offered").map((n) => n.nodeId);
  const phases: ObservedPhase[] = ["ACCEPTED", "DOWNLOADING", "VERIFYING", "APPLYING"];
  const full: number[] = [];
  const incremental: number[] = [];
  for (let r = 0; r < repeats; r++) {
    now += 1000;
    const changed = new Set<string>();
    for (let k = 0; k < changedPer; k++) {
      const id = offered[(r * changedPer + k) % offered.length] as string;
      const f = facts.get(id) as NodeFacts;
      const phase = phases[r % phases.length] as ObservedPhase;
      const op = operationId("probe", id, "upgrade");
      facts.set(id, {
        ...f,
        reports: [
          { operationId: op, phase, version: "", code: "", message: "", at: now, bootId: f.bootId },
        ],
      });
      changed.add(id);
    }
    const input: DecideInput = { campaign, nodes, facts, now, target: TARGET };
    const t0 = performance.now();
    const whole = decide(input);
    const t1 = performance.now();
    const since = decide({
      ...input,
      judgedSince: mark === undefined ? undefined : { mark, changedFacts: changed },
    });
    const t2 = performance.now();
    if (JSON.stringify(whole) !== JSON.stringify(since)) {
      throw new Error(`decision ${r}: the incremental decision differs from the full one`);
    }
    full.push(t1 - t0);
    incremental.push(t2 - t1);
    ({ campaign, nodes } = applyDecision(campaign, nodes, whole));
    mark = whole.judged;
  }
  const f = median(full);
  const i = median(incremental);
  process.stdout.write(
    `${count} nodes, ${offered.length} in flight, ${changedPer} changed per decision: ` +
      `full ${f.toFixed(2)} ms, incremental ${i.toFixed(2)} ms (median of ${repeats}; ${(f / i).toFixed(1)}×)\n`,
  );
}

main();
