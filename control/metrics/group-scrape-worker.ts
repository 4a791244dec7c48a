/**
 * A `--workers` worker's side of the group's one scrape: it answers the primary's requests
 * for its series, and has its Control's `/metrics` answer with the whole group's (asked of
 * the primary) instead of its own. When the primary cannot answer in time (it is gone, or
 * the group is stopping), the scrape is this worker's own series, and the log says so.
 */
import type { Logger } from "../log.js";
import {
  type CollectReply,
  type CollectRequest,
  isMessage,
  type ScrapeRequest,
} from "./group-scrape-messages.js";
import type { ControlMetrics } from "./registry.js";

/** How long a worker waits for the group's scrape (Prometheus's default timeout is 10 s). */
export const GROUP_SCRAPE_TIMEOUT_MS = 8_000;

/** The worker's side; see the file's comment. */
export interface WorkerScrape {
  /** From now on `metrics` answers the primary, and its `/metrics` answers for the group. */
  serve(metrics: ControlMetrics): void;
}

/** What the worker needs of its process: the channel to the primary. */
export interface WorkerPort {
  /** False once the channel to the primary is closed. */
  connected(): boolean;
  send(message: ScrapeRequest | CollectReply): void;
  onMessage(listener: (message: unknown) => void): () => void;
}

/** The port of this process (a cluster worker): `process.send` and its 'message' events. */
export function processPort(): WorkerPort {
  return {
    connected: () => process.connected === true,
    // A failed write (the primary is gone) is answered by the timeout, not an 'error' event.
    send: (message) => void process.send?.(message, undefined, {}, () => {}),
    onMessage: (listener) => {
      process.on("message", listener);
      return () => process.off("message", listener);
    },
  };
}

/** Starts answering the primary (with no series until {@link WorkerScrape.serve}). */
export function openWorkerScrape(
  log: Logger,
  port: WorkerPort = processPort(),
  timeoutMs = GROUP_SCRAPE_TIMEOUT_MS,
): WorkerScrape {
  let served: ControlMetrics | undefined;
  let nextId = 1;
  let warned = false;
  // One listener for every scrape in flight (never one per scrape: no listener leak).
  const pending = new Map<number, (text: string | undefined) => void>();
  const collect = async (request: CollectRequest) => {
    const metrics = served ? await served.registry.getMetricsAsJSON() : [];
    port.send({ type: "agent-control:metrics-collected", id: request.id, metrics });
  };
  port.onMessage((message) => {
    if (isMessage(message, "agent-control:metrics-collect")) {
      collect(message).catch((error: unknown) =>
        log.warn({ err: (error as Error).message }, "metrics: could not collect this worker's"),
      );
    } else if (isMessage(message, "agent-control:metrics-scraped")) {
      pending.get(message.id)?.(message.text);
    }
  });
  const scrape = () =>
    new Promise<string | undefined>((resolve) => {
      if (!port.connected()) return resolve(undefined);
      const id = nextId++;
      const timer = setTimeout(() => done(undefined), timeoutMs);
      const done = (text: string | undefined) => {
        clearTimeout(timer);
        pending.delete(id);
        if (text === undefined && !warned) {
          warned = true;
          log.warn("metrics: the primary did not answer: this scrape is this worker's alone");
        }
        if (text !== undefined) warned = false;
        resolve(text);
      };
      pending.set(id, done);
      port.send({ type: "agent-control:metrics-scrape", id });
    });
  return {
    serve(metrics) {
      served = metrics;
      metrics.answerFor({ scrape });
    },
  };
}
