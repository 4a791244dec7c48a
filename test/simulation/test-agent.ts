/**
 * A simulated agent for the hand-built worlds of the simulation's own tests: idle on its
 * version with confirmed sequence 1, a succeeding script, and an empty record the test writes.
 */
import type { SimAgent } from "../../simulation/agent-script.js";
import { newAgentRecord } from "../../simulation/ground-truth.js";

/** What a test may set of {@link testAgent}. */
export interface TestAgentOptions {
  /** The version it runs and its record starts on (default 1.0.0). */
  readonly version?: string;
  /** Its platform (default: the script's own, linux-amd64). */
  readonly platform?: string;
  /** How long its steps and restarts take, in ms (default 10). */
  readonly stepMs?: number;
  /** Its record has its first connect (boot 0, at 0) already. */
  readonly connected?: boolean;
}

/** Agent `id`, idle on its version with confirmed sequence 1 and nothing handled yet. */
export function testAgent(id: string, o: TestAgentOptions = {}): SimAgent {
  const version = o.version ?? "1.0.0";
  const stepMs = o.stepMs ?? 10;
  const record = newAgentRecord(version);
  return {
    script: {
      id,
      pool: "",
      labels: {},
      behaviour: "succeed",
      rollback: "reinstate",
      stepMs,
      restartMs: stepMs,
      configCapable: false,
      onlineAt: 0,
      ...(o.platform === undefined ? {} : { platform: o.platform }),
    },
    version,
    previousVersion: "",
    confirmedSequence: 1,
    boot: 0,
    session: 1,
    handled: new Map(),
    applied: new Map(),
    confirmedHistory: [1],
    sequences: new Map(),
    restarting: false,
    crashedOnce: false,
    lateReverted: false,
    pendingReinstate: undefined,
    configBroken: false,
    busy: false,
    waiting: [],
    record: o.connected ? { ...record, connects: [{ at: 0, boot: 0, version }] } : record,
  };
}
