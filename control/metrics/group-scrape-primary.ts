/**
 * The primary's side of a `--workers` process group's one scrape: asked by the worker a
 * scrape reached, it collects every live worker's series over IPC, adds its own two gauges
 * (`agent_control_workers`, `agent_control_workers_scraped`), aggregates them by each
 * metric's `aggregator` and answers the asker with the text. A worker that exits or does not
 * answer in time is left out of that scrape (`agent_control_workers_scraped` says how many
 * are in it).
 */
import cluster, { type Worker } from "node:cluster";
import { Gauge, Registry } from "prom-client";
import type { Logger } from "../log.js";
import { aggregateScrapes, type RegistryScrape } from "./aggregate.js";
import {
  type CollectRequest,
  isMessage,
  type ScrapeReply,
  type ScrapeRequest,
} from "./group-scrape-messages.js";

/** How long the primary waits for one worker's series. */
export const COLLECT_TIMEOUT_MS = 5_000;

/** Options of {@link serveGroupScrapes}. */
export interface GroupScrapesOptions {
  /** The workers running now (not dead). */
  readonly workers: () => readonly Worker[];
  readonly log: Logger;
  readonly collectTimeoutMs?: number;
}

/**
 * Answers the workers' scrape requests (see the file's comment) until the returned function
 * is called.
 */
export function serveGroupScrapes(o: GroupScrapesOptions): () => void {
  const timeoutMs = o.collectTimeoutMs ?? COLLECT_TIMEOUT_MS;
  const own = new Registry();
  const running = new Gauge({
    name: "agent_control_workers",
    help: "Workers of this --workers process group running now.",
    registers: [own],
  });
  const scraped = new Gauge({
    name: "agent_control_workers_scraped",
    help: "Workers whose series are in this scrape (fewer than agent_control_workers: one did not answer in time).",
    registers: [own],
  });
  // One listener for every request in flight (never one per request: no listener leak).
  let nextId = 1;
  const pending = new Map<
    number,
    { worker: Worker; done: (metrics: RegistryScrape | undefined) => void }
  >();
  const collect = (worker: Worker) =>
    new Promise<RegistryScrape | undefined>((resolve) => {
      const id = nextId++;
      const timer = setTimeout(() => done(undefined), timeoutMs);
      const done = (metrics: RegistryScrape | undefined) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(metrics);
      };
      pending.set(id, { worker, done });
      const request: CollectRequest = { type: "agent-control:metrics-collect", id };
      try {
        // A write to a worker that is going away fails; its 'exit' answers for it.
        worker.send(request, undefined, () => {});
      } catch {
        done(undefined);
      }
    });
  const answer = async (asker: Worker, request: ScrapeRequest) => {
    const workers = o.workers().filter((w) => !w.isDead() && w.isConnected());
    const collected = await Promise.all(workers.map(collect));
    const present = collected.filter((m): m is RegistryScrape => m !== undefined);
    running.set(workers.length);
    scraped.set(present.length);
    const text = await aggregateScrapes([...present, await own.getMetricsAsJSON()]);
    const reply: ScrapeReply = { type: "agent-control:metrics-scraped", id: request.id, text };
    if (!asker.isDead()) asker.send(reply, undefined, () => {});
  };
  const onMessage = (worker: Worker, message: unknown) => {
    if (isMessage(message, "agent-control:metrics-collected")) {
      const waiting = pending.get(message.id);
      if (waiting?.worker === worker) waiting.done(message.metrics);
      return;
    }
    if (!isMessage(message, "agent-control:metrics-scrape")) return;
    answer(worker, message).catch((error: unknown) =>
      o.log.warn({ err: (error as Error).message }, "metrics: the group's scrape failed"),
    );
  };
  const onExit = (worker: Worker) => {
    for (const waiting of [...pending.values()]) {
      if (waiting.worker === worker) waiting.done(undefined);
    }
  };
  cluster.on("message", onMessage);
  cluster.on("exit", onExit);
  return () => {
    cluster.off("message", onMessage);
    cluster.off("exit", onExit);
    for (const waiting of [...pending.values()]) waiting.done(undefined);
  };
}
