/**
 * Incremental judging over random histories: a decision given the previous committed
 * decision's mark and the nodes whose facts changed since (`DecideInput.judgedSince`; a change of liveness
 * alone may go unsaid, as the worker does not count one) equals,
 * field for field, the decision that judges every active node. The histories move facts at
 * random (reports on the upgrade and the rollback, restarts on either version, streams lost
 * and back, config and send failures, capabilities, disabling), let random spans of time pass
 * (so deadlines are crossed singly and many at once), apply random admin commands, and now
 * and then lose a decision's commit (the next one is then given the older mark and every fact
 * changed since it).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type {
  ActionKind,
  AdminCommand,
  CampaignSpecInput,
  DecideInput,
  JudgedMark,
  ObservedPhase,
  OnBreach,
} from "../../../control/campaign/index.js";
import { applyDecision, decide, isActive } from "../../../control/campaign/index.js";
import {
  configFails,
  fleet,
  goOffline,
  goOnline,
  goReconnecting,
  MIN,
  NEW,
  OLD,
  reboot,
  report,
  sendFails,
  setCapabilities,
  setDisabled,
  start,
} from "./harness.js";
import { PROPERTY_RUNS } from "./scenario-arbitraries.js";

const PHASES: ObservedPhase[] = [
  "ACCEPTED",
  "DOWNLOADING",
  "VERIFYING",
  "APPLYING",
  "RESTARTING",
  "CONFIRMED",
  "REFUSED",
  "FAILED",
  "REINSTATED",
];

/** One change to one node's facts; `pick` chooses the node (among the active ones when asked). */
type FactChange =
  | { readonly kind: "report"; readonly phase: ObservedPhase; readonly op: ActionKind }
  | { readonly kind: "reboot"; readonly version: string }
  | { readonly kind: "offline" | "reconnecting" | "online" | "config_fail" | "disable" }
  | { readonly kind: "send_fail"; readonly op: ActionKind }
  | { readonly kind: "capabilities"; readonly capabilities: string[] };

const changeArb: fc.Arbitrary<FactChange> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("report" as const),
      phase: fc.constantFrom(...PHASES),
      op: fc.constantFrom<ActionKind>("upgrade", "upgrade", "rollback"),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("reboot" as const),
      version: fc.constantFrom(NEW, NEW, OLD),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        "offline" as const,
        "reconnecting" as const,
        "online" as const,
        "config_fail" as const,
        "disable" as const,
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("send_fail" as const),
      op: fc.constantFrom<ActionKind>("upgrade", "rollback"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("capabilities" as const),
      capabilities: fc.constantFrom<string[]>(["upgrade.v1"], ["upgrade.v1", "config.v1"]),
    }),
  },
);

/** Changes of liveness alone: a verdict reads them only at a deadline, judged anyway. */
const LIVENESS: ReadonlySet<string> = new Set(["offline", "reconnecting", "online"]);

interface HistoryStep {
  /** Virtual time passing before the decision. */
  readonly dtMs: number;
  readonly changes: readonly {
    readonly pick: number;
    readonly active: boolean;
    readonly change: FactChange;
    /** False: a liveness change is not said to be one (the worker does not count it). */
    readonly said: boolean;
  }[];
  readonly command: AdminCommand | undefined;
  /** False: the decision's transaction is lost (nothing is written, the mark stays). */
  readonly commits: boolean;
  /** Nodes said to have changed though they did not (a caller may over-report). */
  readonly extra: readonly number[];
}

const commandArb: fc.Arbitrary<AdminCommand | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constant<AdminCommand>({ kind: "pause" }) },
  { weight: 2, arbitrary: fc.constant<AdminCommand>({ kind: "resume" }) },
  {
    weight: 1,
    arbitrary: fc.boolean().map<AdminCommand>((rollback) => ({ kind: "abort", rollback })),
  },
);

const stepArb: fc.Arbitrary<HistoryStep> = fc.record({
  dtMs: fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 5, arbitrary: fc.integer({ min: 1, max: 30_000 }) },
    { weight: 3, arbitrary: fc.integer({ min: 30_000, max: 20 * MIN }) },
  ),
  changes: fc.array(
    fc.record({ pick: fc.nat(), active: fc.boolean(), change: changeArb, said: fc.boolean() }),
    {
      maxLength: 4,
    },
  ),
  command: commandArb,
  commits: fc.integer({ min: 0, max: 9 }).map((i) => i !== 0),
  extra: fc.array(fc.nat(), { maxLength: 2 }),
});

const specArb: fc.Arbitrary<Partial<CampaignSpecInput>> = fc.record({
  batches: fc
    .tuple(
      fc.constantFrom([5, 25, 100], [10, 100], [100], [20, 40, 60, 80, 100]),
      fc.integer({ min: 0, max: 10 * MIN }),
    )
    .map(([ps, d]) => ps.map((percent) => ({ percent, minDurationMs: d }))),
  failureThresholdPercent: fc.integer({ min: 0, max: 60 }),
  concurrency: fc.integer({ min: 0, max: 6 }),
  onBreach: fc.constantFrom<OnBreach>("rollback", "pause", "stop"),
  reconnectTimeoutMs: fc.integer({ min: MIN, max: 15 * MIN }),
  configGraceMs: fc.integer({ min: 0, max: 3 * MIN }),
  soakMs: fc.integer({ min: 0, max: 5 * MIN }),
  disruptionBudgetPercent: fc.integer({ min: 1, max: 100 }),
});

const historyArb = fc.record({
  nodes: fc.integer({ min: 1, max: 30 }),
  configCapable: fc.boolean(),
  spec: specArb,
  readyAt: fc.option(fc.integer({ min: 0, max: 10 * MIN }), { nil: undefined }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 60 }),
});

describe("incremental judging", () => {
  it("decides exactly as judging every active node does, over random histories", () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const h = start(
          fleet(history.nodes, {
            capabilities: () =>
              history.configCapable ? ["upgrade.v1", "config.v1"] : ["upgrade.v1"],
          }),
          history.spec,
        );
        let mark: JudgedMark | undefined;
        let changed = new Set<string>();
        for (const step of history.steps) {
          const active = h.nodes.filter((n) => isActive(n.state)).map((n) => n.nodeId);
          const ids = h.nodes.map((n) => n.nodeId);
          for (const { pick, active: onActive, change, said } of step.changes) {
            const from = onActive && active.length > 0 ? active : ids;
            const id = from[pick % from.length] as string;
            applyChange(h, id, change);
            if (said || !LIVENESS.has(change.kind)) changed.add(id);
          }
          h.now += step.dtMs;
          const input: DecideInput = {
            campaign: h.campaign,
            nodes: h.nodes,
            facts: h.facts,
            now: h.now,
            target: h.target,
            commands: step.command === undefined ? [] : [step.command],
            readyAt: history.readyAt,
          };
          const full = decide(input);
          const said = new Set([
            ...changed,
            ...step.extra.map((i) => ids[i % ids.length] as string),
          ]);
          const incremental = decide({
            ...input,
            judgedSince: mark === undefined ? undefined : { mark, changedFacts: said },
          });
          expect(incremental).toEqual(full);
          if (!step.commits) continue;
          const next = applyDecision(h.campaign, h.nodes, full);
          h.campaign = next.campaign;
          h.nodes = next.nodes;
          mark = full.judged;
          changed = new Set();
        }
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

function applyChange(h: ReturnType<typeof start>, id: string, change: FactChange): void {
  switch (change.kind) {
    case "report":
      report(h, id, change.phase, change.op);
      return;
    case "reboot":
      reboot(h, id, change.version);
      return;
    case "offline":
      goOffline(h, id);
      return;
    case "reconnecting":
      goReconnecting(h, id);
      return;
    case "online":
      goOnline(h, id);
      return;
    case "config_fail":
      configFails(h, id);
      return;
    case "disable":
      setDisabled(h, id);
      return;
    case "send_fail":
      sendFails(h, id, change.op);
      return;
    case "capabilities":
      setCapabilities(h, id, change.capabilities);
      return;
  }
}
