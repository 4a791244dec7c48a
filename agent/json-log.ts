/**
 * A one-line-JSON logger on stderr, with no dependency, so the bundled artifact stays small
 * and starts fast: `{"time":…,"level":"info","component":"agent","msg":…,…fields}`.
 */
import type { AgentLog } from "./core/log.js";

/** A logger writing one JSON line per entry to stderr, tagged with `component`. */
export function jsonLog(component: string): AgentLog {
  const write = (level: string) => (fields: object, message: string) => {
    const line = { time: new Date().toISOString(), level, component, msg: message, ...fields };
    process.stderr.write(`${JSON.stringify(line)}\n`);
  };
  return { info: write("info"), warn: write("warn"), error: write("error"), debug: () => {} };
}
