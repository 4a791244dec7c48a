/**
 * `npm run demo`: the product's story end to end on this machine. Starts Control (as
 * `npm start` would) on the embedded PostgreSQL under `.data/demo`, enrolls a simulated
 * fleet with a join token made by `agentctl`, shows it with `agentctl node list`, and
 * leaves everything running for the viewer to explore (Ctrl-C stops it).
 *
 * `--exit` ends after the story instead of staying up (used by CI).
 */
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startFleet } from "../index.js";
import { agentctl } from "./agentctl.js";
import { startControlProcess } from "./control-process.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      exit: { type: "boolean", default: false },
      count: { type: "string", default: "50" },
      "agent-addr": { type: "string", default: "127.0.0.1:7443" },
      "admin-addr": { type: "string", default: "127.0.0.1:7080" },
    },
    strict: true,
  });
  const count = Number(values.count);
  const dataDir = resolve(ROOT, ".data", "demo");
  const agentAddr = values["agent-addr"];
  const adminAddr = values["admin-addr"];
  const env = { AGENTCTL_SERVER: `http://${adminAddr}`, AGENT_CONTROL_DATA_DIR: dataDir };

  say(`Starting Control on the embedded PostgreSQL (data in ${dataDir}) …`);
  await rm(dataDir, { recursive: true, force: true });
  const control = await startControlProcess({
    dataDir,
    agentAddr,
    adminAddr,
    config: { timeouts: { heartbeatSeconds: 5 } },
  });
  say(
    `Control is up: agents on ${agentAddr}, admin API on ${control.adminUrl} (log: ${control.logFile})`,
  );

  const token = await agentctl(
    ["token", "create", "--ttl", "24h", "--description", "demo", "--json"],
    {
      env,
    },
  );
  if (token.code !== 0) throw new Error(`could not create a join token: ${token.stderr}`);
  const secret = (JSON.parse(token.stdout) as { secret: string }).secret;

  say(`Enrolling ${count} simulated agents with that join token …`);
  const fleet = await startFleet({
    server: agentAddr,
    joinToken: secret,
    count,
    seed: 42,
    poolCount: 3,
    canaryCount: 2,
    version: "1.0.0",
  });
  await fleet.waitUntil((f) => f.welcomedCount() === count, 60_000, "every agent welcomed");
  await agentctl(["node", "list"], { env });

  say(
    [
      "The fleet is online. Explore it with:",
      `  export AGENTCTL_SERVER=http://${adminAddr} AGENT_CONTROL_DATA_DIR=${dataDir}`,
      "  npx agentctl node list",
      "  npx agentctl node list --online --json",
      "  npx agentctl node show sim-00001",
      "  npx agentctl token list",
      "  curl -s http://" + adminAddr + "/metrics",
    ].join("\n"),
  );

  const stop = async () => {
    await fleet.stop();
    await control.stop();
  };
  if (values.exit) {
    await stop();
    say("Demo finished.");
    return 0;
  }
  say("Control and the fleet keep running; press Ctrl-C to stop them.");
  await new Promise<void>((resolveStop) => {
    process.once("SIGINT", () => resolveStop());
    process.once("SIGTERM", () => resolveStop());
  });
  await stop();
  return 0;
}

function say(text: string): void {
  process.stdout.write(`\n== ${text}\n`);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`demo: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
