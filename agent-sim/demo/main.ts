/**
 * `npm run demo`: the product's story end to end on this machine, in under three minutes.
 *
 * 1. Control starts (as `npm start` would) on the embedded PostgreSQL under `.data/demo`,
 *    pinned to a release key made offline with `agentctl release keygen`.
 * 2. 200 simulated agents enroll: three pools of healthy agents with a few flaky ones, and a
 *    `legacy` pool whose agents lack `upgrade.v1` (they are skipped, never offered).
 * 3. Release 1.1.0 is built, signed and registered with agentctl, and a staged campaign
 *    (5 % → 25 % → 100 %) runs while `agentctl campaign watch` shows it: it completes.
 * 4. Release 1.2.0 is one every agent fails to apply: its canaries fail, the batch breaches
 *    its threshold and is rolled back, and the watch shows which node stopped it.
 * 5. Control and the fleet keep running for exploration; the commands are printed.
 *
 * `--exit` ends after the story (CI); the exit code is 0 only when the first campaign
 * completed and the second was rolled back.
 */
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startFleet } from "../index.js";
import { startControlProcess } from "./control-process.js";
import { lookAroundCommands } from "./look-around.js";
import { makeSigningKey, must, runCampaign, type StoryContext, signAndRegister } from "./story.js";

const ROOT = resolve(import.meta.dirname, "..", "..");
const DEFAULT_ADMIN_ADDR = "127.0.0.1:7080";
const DEFAULT_DATA_DIR = resolve(ROOT, ".data", "demo");

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      exit: { type: "boolean", default: false },
      count: { type: "string", default: "200" },
      "batch-seconds": { type: "string", default: "8" },
      "agent-addr": { type: "string", default: "127.0.0.1:7443" },
      "admin-addr": { type: "string", default: DEFAULT_ADMIN_ADDR },
      "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
    },
    strict: true,
  });
  const count = Number(values.count);
  const batchSeconds = Number(values["batch-seconds"]);
  const dataDir = resolve(values["data-dir"]);
  const agentAddr = values["agent-addr"];
  const adminAddr = values["admin-addr"];
  const ctx: StoryContext = {
    dir: resolve(dataDir, "release"),
    env: { AGENTCTL_SERVER: `http://${adminAddr}`, AGENT_CONTROL_DATA_DIR: dataDir },
    say,
  };

  await rm(dataDir, { recursive: true, force: true });
  say("Making a release signing key offline (agentctl release keygen) …");
  const { keyFile, pin } = await makeSigningKey(ctx);

  say(`Starting Control on the embedded PostgreSQL (data in ${dataDir}), pinned to ${pin} …`);
  const control = await startControlProcess({
    dataDir,
    agentAddr,
    adminAddr,
    env: { AGENT_CONTROL_RELEASE_PINS: pin },
    config: {
      policy: { minBatchDurationSeconds: 1 },
      timeouts: { heartbeatSeconds: 5, reconnectSeconds: 30, configGraceSeconds: 2 },
      worker: { intervalMs: 1000 },
      // The simulated fleet reports its own pools and canaries: a lab, not production,
      // where these labels come from join tokens or `agentctl node label`.
      enrollment: { agentReportedLabels: ["pool", "canary"] },
    },
  });
  say(
    `Control is up: agents on ${agentAddr}, admin API on ${control.adminUrl} (log: ${control.logFile})`,
  );

  const token = JSON.parse(
    await must(ctx, ["token", "create", "--ttl", "24h", "--description", "demo fleet", "--json"]),
  ) as { secret: string };
  const legacyCount = Math.max(1, Math.round(count / 10));
  const mainCount = count - legacyCount;
  say(
    `Enrolling ${mainCount} agents in pools 1-3 (a few flaky) and ${legacyCount} legacy agents without upgrade.v1 …`,
  );
  const common = {
    server: agentAddr,
    joinToken: token.secret,
    version: "1.0.0",
    pins: [pin],
    failVersions: ["1.2.0"],
    restartMs: [300, 1500] as const,
  };
  const fleet = await startFleet({
    ...common,
    count: mainCount,
    seed: 42,
    poolCount: 3,
    canaryCount: 2,
    rates: { flap: 0.02 },
  });
  const legacy = await startFleet({
    ...common,
    count: legacyCount,
    seed: 43,
    idPrefix: "legacy-",
    labels: { pool: "legacy" },
    capabilities: ["config.v1"],
  });
  await fleet.waitUntil((f) => f.welcomedCount() >= mainCount - 5, 60_000, "the fleet online");
  await legacy.waitUntil(
    (f) => f.welcomedCount() === legacyCount,
    60_000,
    "the legacy pool online",
  );
  await must(ctx, ["node", "list", "--pool", "legacy"]);

  say("Building, signing and registering release 1.1.0 …");
  await signAndRegister(ctx, keyFile, "1.1.0", 1);
  await must(ctx, ["release", "list"]);
  const batches = `5:${batchSeconds}s,25:${batchSeconds}s,100:${batchSeconds}s`;
  const good = await runCampaign(ctx, "1.1.0", batches, ["--reason", "demo: staged upgrade"]);

  say("Now a bad release: every agent fails to apply 1.2.0, so its canaries fail …");
  await signAndRegister(ctx, keyFile, "1.2.0", 2);
  const bad = await runCampaign(ctx, "1.2.0", batches, ["--reason", "demo: a bad release"]);
  await must(ctx, ["audit", "list"]);

  // agentctl run in this checkout finds the demo's operator token by itself (Control notes
  // its admin URL in the data dir); only a non-default address or data dir needs telling.
  const exports = [
    ...(adminAddr !== DEFAULT_ADMIN_ADDR ? [`AGENTCTL_SERVER=http://${adminAddr}`] : []),
    ...(dataDir !== DEFAULT_DATA_DIR ? [`AGENT_CONTROL_DATA_DIR=${dataDir}`] : []),
  ];
  say(
    [
      "Explore what happened (in another terminal, in this checkout):",
      ...(exports.length > 0 ? [`  export ${exports.join(" ")}`] : []),
      ...lookAroundCommands(good.id, bad.id).map(
        (line) => `  ${line.command}${line.comment === undefined ? "" : `    # ${line.comment}`}`,
      ),
      `  curl -s http://${adminAddr}/metrics`,
    ].join("\n"),
  );
  const ok = good.phase === "completed" && bad.phase === "rolled_back";
  if (!ok) say(`Unexpected outcome: first campaign ${good.phase}, second ${bad.phase}`);
  const stop = async () => {
    await Promise.all([fleet.stop(), legacy.stop()]);
    await control.stop();
  };
  if (values.exit) {
    await stop();
    say(
      ok
        ? "Demo finished: the first campaign completed, the bad one was rolled back."
        : "Demo failed.",
    );
    return ok ? 0 : 1;
  }
  say("Control and the fleet keep running; press Ctrl-C to stop them.");
  await new Promise<void>((resolveStop) => {
    process.once("SIGINT", () => resolveStop());
    process.once("SIGTERM", () => resolveStop());
  });
  await stop();
  return ok ? 0 : 1;
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
