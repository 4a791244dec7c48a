/**
 * The messages of a `--workers` process group's one scrape, over node:cluster's IPC channel:
 *
 * 1. the worker a scrape reached asks the primary for the group's ({@link ScrapeRequest});
 * 2. the primary asks every live worker, the asker too, for its series ({@link CollectRequest});
 * 3. each answers with its registry's JSON ({@link CollectReply});
 * 4. the primary aggregates them and answers the asker with the text ({@link ScrapeReply}).
 */
import type { RegistryScrape } from "./aggregate.js";

/** A worker asks the primary for the group's exposition. */
export interface ScrapeRequest {
  readonly type: "agent-control:metrics-scrape";
  readonly id: number;
}

/** The primary's answer to {@link ScrapeRequest}: the group's exposition text. */
export interface ScrapeReply {
  readonly type: "agent-control:metrics-scraped";
  readonly id: number;
  readonly text: string;
}

/** The primary asks a worker for its series. */
export interface CollectRequest {
  readonly type: "agent-control:metrics-collect";
  readonly id: number;
}

/** A worker's series (none while it still starts). */
export interface CollectReply {
  readonly type: "agent-control:metrics-collected";
  readonly id: number;
  readonly metrics: RegistryScrape;
}

type Message = ScrapeRequest | ScrapeReply | CollectRequest | CollectReply;

/** True when `message` is a message of `type` (with a numeric id). */
export function isMessage<T extends Message["type"]>(
  message: unknown,
  type: T,
): message is Extract<Message, { type: T }> {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { type?: unknown }).type === type &&
    typeof (message as { id?: unknown }).id === "number"
  );
}
