/**
 * SIGHUP under `--workers`: the primary, which serves nothing, asks every worker over the
 * cluster's IPC channel to re-read the admin tokens file, gathers their answers and logs one
 * line for all of them (each worker reloads quietly). A worker still starting answers once it
 * serves (it re-reads the file then); one that does not answer in time is named in the line.
 */
import type { Worker } from "node:cluster";
import type { TokenReload } from "./admin/token-reload.js";
import type { Logger } from "./log.js";

/** The primary's request to a worker. */
export interface ReloadRequest {
  readonly type: "agent-control:reload-admin-tokens";
  readonly id: number;
}

/** A worker's answer to {@link ReloadRequest}. */
export interface ReloadReply {
  readonly type: "agent-control:admin-tokens-reloaded";
  readonly id: number;
  readonly result: TokenReload;
}

/** True when `message` is a {@link ReloadRequest}. */
export function isReloadRequest(message: unknown): message is ReloadRequest {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { type?: unknown }).type === "agent-control:reload-admin-tokens" &&
    typeof (message as { id?: unknown }).id === "number"
  );
}

function isReply(message: unknown, id: number): message is ReloadReply {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { type?: unknown }).type === "agent-control:admin-tokens-reloaded" &&
    (message as { id?: unknown }).id === id
  );
}

/** What one worker answered: its reload, or why there is none. */
type Answer = { readonly pid: number } & (
  | { readonly answer: "reloaded"; readonly result: TokenReload }
  | { readonly answer: "exited" | "none in time" }
);

let nextId = 1;

/** Asks one worker to reload; resolves with its answer (never rejects). */
function ask(worker: Worker, timeoutMs: number): Promise<Answer> {
  const pid = worker.process.pid ?? 0;
  const id = nextId++;
  return new Promise((resolve) => {
    const done = (answer: Answer) => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("exit", onExit);
      resolve(answer);
    };
    const onMessage = (message: unknown) => {
      if (isReply(message, id)) done({ pid, answer: "reloaded", result: message.result });
    };
    const onExit = () => done({ pid, answer: "exited" });
    const timer = setTimeout(() => done({ pid, answer: "none in time" }), timeoutMs);
    worker.on("message", onMessage);
    worker.on("exit", onExit);
    const request: ReloadRequest = { type: "agent-control:reload-admin-tokens", id };
    try {
      // A write to a worker that is going away fails; its 'exit' answers for it.
      worker.send(request, undefined, () => {});
    } catch {
      done({ pid, answer: "exited" });
    }
  });
}

/**
 * Asks every worker to reload the admin tokens file and logs one line saying what happened:
 * `admin tokens reloaded in every worker` (info) with the workers' pids and the tokens in
 * force; `admin tokens file not reloaded: the tokens in force stay` (error) with the
 * problems when every worker refused the file; otherwise `admin tokens not reloaded in every
 * worker` (error) with each worker's answer.
 */
export async function reloadInEveryWorker(
  workers: readonly Worker[],
  log: Logger,
  signal: NodeJS.Signals,
  timeoutMs = 10_000,
): Promise<void> {
  if (workers.length === 0) {
    log.info({ signal }, "no worker runs now: each reads the admin tokens file as it starts");
    return;
  }
  const answers = await Promise.all(workers.map((worker) => ask(worker, timeoutMs)));
  const pids = answers.map((a) => a.pid);
  const results = answers.flatMap((a) => (a.answer === "reloaded" ? [a.result] : []));
  const same = (a: TokenReload, b: TokenReload) => JSON.stringify(a) === JSON.stringify(b);
  const [first] = results;
  if (
    first !== undefined &&
    results.length === answers.length &&
    results.every((r) => same(r, first))
  ) {
    if (first.ok) {
      log.info(
        { signal, workers: pids, tokens: first.names },
        "admin tokens reloaded in every worker",
      );
    } else {
      log.error(
        { signal, workers: pids, problems: first.problems },
        "admin tokens file not reloaded: the tokens in force stay",
      );
    }
    return;
  }
  log.error(
    {
      signal,
      workers: answers.map((a) =>
        a.answer !== "reloaded"
          ? { pid: a.pid, answer: a.answer }
          : a.result.ok
            ? { pid: a.pid, answer: a.answer, tokens: a.result.names }
            : { pid: a.pid, answer: "refused", problems: a.result.problems },
      ),
    },
    "admin tokens not reloaded in every worker",
  );
}
