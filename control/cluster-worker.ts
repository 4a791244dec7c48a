/**
 * A `--workers` worker's side of its channel to the primary.
 *
 * - The primary's requests for this worker's metrics are answered with its Control's series,
 *   and its `/metrics` answers with the whole group's, asked of the primary
 *   (control/metrics/group-scrape-worker.ts).
 * - The primary's reload requests (SIGHUP, control/cluster-reload.ts) are answered with the
 *   worker's quiet reload; one that comes while the worker still starts is answered once it
 *   serves.
 * - The channel may break while the worker drains: when systemd signals the whole control
 *   group, or the primary was killed, node:cluster's own messages (a server closing tells the
 *   primary) are written to a closed pipe, and Node raises that `write EPIPE` (or
 *   `ERR_IPC_CHANNEL_CLOSED`) as an 'error' event on `process`, which node:cluster emits again
 *   on `cluster.worker`, where nothing handled it: the worker crashed instead of draining. Those errors are logged once and the worker drains
 *   as it does when the channel closes.
 * - node:cluster ends a worker at once (`process.exit(0)`) when the channel closes unless the
 *   worker is marked as leaving (`exitedAfterDisconnect`): a worker whose primary was killed
 *   dropped its agents' streams undrained. It is marked from the start, so the channel's
 *   'disconnect' is left to Control, which drains.
 */
import cluster from "node:cluster";
import type { TokenReload } from "./admin/token-reload.js";
import { isReloadRequest, type ReloadReply, type ReloadRequest } from "./cluster-reload.js";
import type { Logger } from "./log.js";
import { openWorkerScrape } from "./metrics/group-scrape-worker.js";
import type { ControlMetrics } from "./metrics/index.js";

/** The worker's channel; see the file's comment. */
export interface WorkerChannel {
  /**
   * From now on, reload requests are answered with `reload` (and any waiting ones at once),
   * and `metrics` answers the primary's requests and renders the group's scrape.
   */
  serve(reload: () => TokenReload, metrics: ControlMetrics): void;
}

const CHANNEL_GONE = new Set([
  "EPIPE",
  "ERR_IPC_CHANNEL_CLOSED",
  "ECONNRESET",
  "ERR_IPC_DISCONNECTED",
]);

/**
 * Starts listening on the channel (call it before the worker starts Control); `onLost` runs
 * once when a write finds the channel broken.
 */
export function openWorkerChannel(log: Logger, onLost: () => void): WorkerChannel {
  let reload: (() => TokenReload) | undefined;
  const waiting: ReloadRequest[] = [];
  let lost = false;
  if (cluster.worker) cluster.worker.exitedAfterDisconnect = true;
  const scrape = openWorkerScrape(log);
  const answer = (request: ReloadRequest, serve: () => TokenReload) => {
    const reply: ReloadReply = {
      type: "agent-control:admin-tokens-reloaded",
      id: request.id,
      result: serve(),
    };
    // The callback takes a failed write (the primary went meanwhile) instead of 'error'.
    process.send?.(reply, undefined, {}, () => {});
  };
  process.on("message", (message: unknown) => {
    if (!isReloadRequest(message)) return;
    if (reload) answer(message, reload);
    else waiting.push(message);
  });
  // node:cluster passes the worker process's 'error' on to `cluster.worker`, where an
  // unhandled one is thrown.
  const errors = cluster.worker ?? process;
  errors.on("error", (error: NodeJS.ErrnoException) => {
    if (!CHANNEL_GONE.has(error.code ?? "")) throw error;
    if (lost) return;
    lost = true;
    log.warn({ err: error.message }, "the channel to the primary is gone: draining");
    onLost();
  });
  return {
    serve(fn, metrics) {
      scrape.serve(metrics);
      reload = fn;
      for (const request of waiting.splice(0)) answer(request, fn);
    },
  };
}
