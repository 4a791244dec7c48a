/**
 * `npm run sim`: runs a fleet of simulated Agents until SIGINT/SIGTERM, printing a status
 * line every few seconds. Exit codes: 0 after a clean stop, 2 for bad flags, 1 on failure.
 */
import pino from "pino";
import { parseCliArgs, USAGE } from "./cli-args.js";
import { startFleet } from "./fleet.js";
import { formatStatusLine } from "./fleet-stats.js";

async function main(): Promise<number> {
  const parsed = parseCliArgs(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    process.stderr.write(`agent-sim: ${parsed.message} (see --help)\n`);
    return 2;
  }
  if (parsed.command.kind === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  const { options, logLevel, statusEveryMs } = parsed.command;
  const logger = pino({ level: logLevel, base: { component: "agent-sim" } }, pino.destination(2));
  const root = new AbortController();
  let signals = 0;
  const onSignal = (name: NodeJS.Signals) => {
    signals++;
    if (signals > 1) process.exit(130);
    logger.info({ signal: name }, "stopping");
    root.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const fleet = await startFleet({ ...options, signal: root.signal, logger });
  const print = () => process.stdout.write(`${formatStatusLine(fleet.stats())}\n`);
  process.stdout.write(
    `agent-sim: ${options.count} agents → ${options.server} (seed ${options.seed ?? 1})\n`,
  );
  // Also keeps the process alive when no agent holds a socket (e.g. all offline).
  const timer = setInterval(statusEveryMs > 0 ? print : () => {}, statusEveryMs || 60_000);
  await new Promise<void>((resolve) => {
    if (root.signal.aborted) resolve();
    else root.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  clearInterval(timer);
  await fleet.stop();
  print();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`agent-sim: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
