/**
 * LISTEN/NOTIFY for the SQL campaign store. `notify` is one statement on a pooled connection
 * (delivered when it commits, i.e. at once); `listen` holds a dedicated connection out of the
 * pool for as long as it listens. When that connection breaks (server restart, network) it is
 * replaced with a growing delay (0.25 s to 5 s); each time the channels are listened on again
 * the listener's `onGap` runs, since notifications sent meanwhile were lost.
 */
import type pg from "pg";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import { packLines, unpackLines } from "../../shared/notify-channels.js";
import type { NotificationListener } from "../port.js";
import type { Queryable } from "./reads.js";

const CHANNEL = /^[a-z_][a-z0-9_]*$/;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/** See {@link CampaignStore.notify}. */
export async function notify(db: Queryable, channel: string, lines: readonly string[]) {
  const payloads = packLines(lines);
  if (payloads.length === 0) return;
  await db.query(
    "select pg_notify($1, p) from unnest($2::text[]) with ordinality as x(p, i) order by i",
    [channel, payloads],
  );
}

/** See {@link CampaignStore.listen}. */
export function listen(
  pool: pg.Pool,
  log: Logger,
  clock: Clock,
  channels: readonly string[],
  listener: NotificationListener,
): () => Promise<void> {
  for (const channel of channels) {
    if (!CHANNEL.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
  }
  const wanted = new Set(channels);
  let client: pg.PoolClient | undefined;
  let stopped = false;
  let retryMs = FIRST_RETRY_MS;
  /** Aborts the wait before the next attempt (stop); set while one waits. */
  let waiting: AbortController | undefined;
  let connecting: Promise<void> = Promise.resolve();

  const onNotification = (message: pg.Notification) => {
    if (!wanted.has(message.channel)) return;
    try {
      listener.onNotify(message.channel, unpackLines(message.payload ?? ""));
    } catch (error) {
      log.error({ err: error, channel: message.channel }, "notification listener failed");
    }
  };

  const drop = (c: pg.PoolClient) => {
    c.removeListener("notification", onNotification);
    c.release(new Error("listen connection dropped"));
  };

  const retry = () => {
    if (stopped || waiting !== undefined) return;
    const wait = new AbortController();
    waiting = wait;
    const delay = retryMs;
    retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
    connecting = clock.sleep(delay, wait.signal).then(
      () => {
        waiting = undefined;
        return connect();
      },
      () => {
        waiting = undefined;
      },
    );
  };

  const connect = async (): Promise<void> => {
    let c: pg.PoolClient | undefined;
    try {
      c = await pool.connect();
      const mine = c;
      mine.on("notification", onNotification);
      mine.on("error", (error: Error) => {
        if (client !== mine) return;
        client = undefined;
        log.warn({ err: error.message }, "listen connection failed; listening again");
        drop(mine);
        retry();
      });
      for (const channel of wanted) await mine.query(`listen ${channel}`);
      if (stopped) {
        drop(mine);
        return;
      }
      client = mine;
      retryMs = FIRST_RETRY_MS;
      listener.onGap?.();
    } catch (error) {
      if (c !== undefined && client !== c) drop(c);
      if (stopped) return;
      log.warn({ err: (error as Error).message }, "could not listen for notifications; retrying");
      retry();
    }
  };

  connecting = connect();
  return async () => {
    stopped = true;
    waiting?.abort();
    await connecting;
    const c = client;
    client = undefined;
    if (c !== undefined) drop(c);
  };
}
