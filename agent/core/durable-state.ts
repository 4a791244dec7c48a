/**
 * What an Agent keeps across restarts, and where: in memory, or as one JSON file per node
 * (the real Agent's install directory, the simulator's `--state-dir`), so a restarted
 * process keeps its identity, node token, versions, confirmed sequence and handled
 * operations. Files are replaced atomically and fsynced.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { TrustState } from "./trust-state.js";

/** The last ObservedState an agent reported for an operation (re-sent on redelivery). */
export interface ReportedState {
  phase: number;
  version: string;
  code: string;
  message: string;
}

/** One agent's durable state. */
export interface DurableState {
  nodeId: string;
  /** The node token Control issued at enrollment, if any. */
  nodeToken?: string;
  /**
   * Sent with the join token until a node token arrives (see {@link enrollmentKeyOf}), so a
   * retry of an enrollment whose Welcome was lost is recognised as the same Agent.
   */
  enrollmentKey?: string;
  version: string;
  previousVersion: string;
  /** Decimal string of the uint64 confirmed sequence. */
  confirmedSequence: string;
  /**
   * Version → decimal sequence of the releases this agent itself verified and installed
   * (its current and previous ones only). A confirm may raise the floor to the sequence of
   * the current release as recorded here, never to one an operation names.
   */
  sequences?: Record<string, string>;
  /**
   * Decimal string of the highest sequence this agent ever installed (applied, welcomed or
   * not, confirmed or not); an upgrade below it is refused `sequence_rollback`. Recorded by
   * the real Agent ({@link raiseInstalledSequence}); absent: no floor beyond the confirmed one.
   */
  installedSequence?: string;
  /** Operation id → last state reported for it, oldest first (bounded). */
  handled: Record<string, ReportedState>;
  /**
   * The last TUF check (an upgrade's or a periodic refresh): `frozen` when the channel's
   * metadata had expired (no new release is accepted until fresh metadata is fetched), since
   * when, with the refusal's code and message.
   */
  trust?: TrustState;
  /** A rollback operation whose REINSTATED is due once the agent is back. */
  pendingReinstate?: string;
  /**
   * An operation whose stored report (in `handled`) must be sent once welcomed: an upgrade the
   * agent reverted while restarting into it (the real Agent's supervisor sets it).
   */
  pendingReport?: string;
  /** The agent came back from an upgrade whose configuration does not apply. */
  configBroken?: boolean;
}

/**
 * The enrollment key to send in a join-token Hello: the state's own, made (24 random bytes,
 * base64url) on first use. Save the state before the Hello that carries a new key, and drop
 * the key once a Welcome hands over the node token.
 */
export function enrollmentKeyOf(state: DurableState): string {
  state.enrollmentKey ??= randomBytes(24).toString("base64url");
  return state.enrollmentKey;
}

/** How many handled operation ids an agent remembers. */
export const MAX_HANDLED_OPERATIONS = 256;

/** Loads and saves agents' durable state. */
export interface StateStore {
  /** The saved state of `nodeId`, or undefined when there is none. */
  load(nodeId: string): Promise<DurableState | undefined>;
  /** Saves `state` durably before resolving (atomic per agent). */
  save(state: DurableState): Promise<void>;
}

/** A store that keeps nothing: state lives only in the agent objects. */
export const memoryStateStore: StateStore = {
  load: async () => undefined,
  save: async () => {},
};

/**
 * A store writing `<dir>/<nodeId>.json` atomically (temp file + rename), for many agents in
 * one process. With `fsync` (the default) each save is also fsynced like the real Agent's
 * state (power-loss safe); without it a save survives the process being killed, not the
 * machine losing power, which is what a simulated fleet of thousands needs at the rate it
 * saves (the simulator passes `fsync: false`).
 */
export function fileStateStore(dir: string, options: { fsync?: boolean } = {}): StateStore {
  const fsync = options.fsync ?? true;
  let made: Promise<unknown> | undefined;
  return {
    async load(nodeId) {
      try {
        const text = await readFile(join(dir, `${safeName(nodeId)}.json`), "utf8");
        return parseState(text, nodeId);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    },
    async save(state) {
      made ??= mkdir(dir, { recursive: true });
      await made;
      const file = join(dir, `${safeName(state.nodeId)}.json`);
      const text = `${JSON.stringify(state)}\n`;
      if (fsync) {
        await writeFileDurably(file, text);
      } else {
        const temp = `${file}.${process.pid}.tmp`;
        await writeFile(temp, text, { mode: 0o600 });
        await rename(temp, file);
      }
    },
  };
}

/**
 * Replaces `file` with `text` so that a crash at any moment leaves either the old or the
 * new content: a temporary file is written and fsynced, renamed over `file`, and the
 * directory is fsynced so the rename itself survives a power loss. Mode 0600.
 */
export async function writeFileDurably(file: string, text: string | Uint8Array): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const handle = await open(temp, "w", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  await syncDirectory(dirname(file));
}

/** Fsyncs a directory (its entries); ignored where the platform cannot. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

function safeName(nodeId: string): string {
  return nodeId.replace(/[^A-Za-z0-9._-]/g, "_");
}

/**
 * Parses a saved state; throws when it is not one (or, with `nodeId`, names another node).
 */
export function parseState(text: string, nodeId?: string): DurableState {
  const value = JSON.parse(text) as Partial<DurableState>;
  if (
    typeof value.nodeId !== "string" ||
    (nodeId !== undefined && value.nodeId !== nodeId) ||
    typeof value.version !== "string" ||
    typeof value.previousVersion !== "string" ||
    typeof value.confirmedSequence !== "string" ||
    !/^\d+$/.test(value.confirmedSequence) ||
    typeof value.handled !== "object" ||
    value.handled === null ||
    !validSequences(value.sequences) ||
    (value.installedSequence !== undefined &&
      (typeof value.installedSequence !== "string" || !/^\d+$/.test(value.installedSequence)))
  ) {
    throw new Error(
      `state file of ${nodeId ?? value.nodeId ?? "the agent"} is not a valid agent state`,
    );
  }
  return value as DurableState;
}

function validSequences(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === "string" && /^\d+$/.test(v));
}

/**
 * Records that this agent verified `version` at `sequence`, keeping only the entries of
 * the versions in `keep` besides it (the sequences of releases it no longer holds go).
 */
export function recordSequence(
  state: DurableState,
  version: string,
  sequence: bigint,
  keep: readonly string[],
): void {
  const next: Record<string, string> = {};
  for (const v of keep) {
    const known = state.sequences?.[v];
    if (known !== undefined) next[v] = known;
  }
  next[version] = sequence.toString();
  state.sequences = next;
}

/**
 * Raises `state.installedSequence` to `sequence` and to every sequence `state.sequences`
 * records (an install whose state predates the field gets its floor from them); never
 * lowers it. True when it changed.
 */
export function raiseInstalledSequence(state: DurableState, sequence = 0n): boolean {
  let floor = state.installedSequence === undefined ? -1n : BigInt(state.installedSequence);
  const before = floor;
  for (const known of [sequence, ...Object.values(state.sequences ?? {}).map((v) => BigInt(v))]) {
    if (known > floor) floor = known;
  }
  if (floor === before || floor < 0n) return false;
  state.installedSequence = floor.toString();
  return true;
}

/**
 * The report remembered for `opId`, if any. Own entries only: an id named like an
 * Object.prototype member (`__proto__`, `constructor`) is an id like any other.
 */
export function reportOf(state: DurableState, opId: string): ReportedState | undefined {
  return Object.hasOwn(state.handled, opId) ? state.handled[opId] : undefined;
}

/**
 * Sets the report of `opId` as an own entry (a plain `handled["__proto__"] = …` would set the
 * object's prototype instead).
 */
export function setReport(state: DurableState, opId: string, reported: ReportedState): void {
  Object.defineProperty(state.handled, opId, {
    value: reported,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** Records `reported` for `opId`, keeping at most {@link MAX_HANDLED_OPERATIONS} ids. */
export function rememberReport(state: DurableState, opId: string, reported: ReportedState): void {
  if (!Object.hasOwn(state.handled, opId)) {
    const ids = Object.keys(state.handled);
    for (let i = 0; i <= ids.length - MAX_HANDLED_OPERATIONS; i++) delete state.handled[ids[i]!];
  }
  setReport(state, opId, reported);
}

/**
 * Serialises saves of one agent's state: a save requested while another is queued joins
 * it (it will write the newest state anyway), so bursts of reports cost one write each.
 */
export class SaveQueue {
  #chain: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly state: DurableState,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Resolves once a write that started after this call has finished. Never rejects. */
  save(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    const queued = this.#chain
      .then(() => {
        this.#queued = undefined;
        return this.store.save(this.state);
      })
      .catch(this.onError);
    this.#queued = queued;
    this.#chain = queued;
    return queued;
  }
}
