/**
 * The `agentctl` commands of the operator guide's campaign sections ("Choosing batches and
 * thresholds", "Reading a campaign", desired versions, rollout plans) and the demo's closing
 * commands run as printed, against a real Control with simulated agents
 * (`printed-commands-fixture.ts`). The guide's variants start on the fleet one after another;
 * before the next, the reader aborts the last one (rolling its batch back) and waits for its
 * end.
 */
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lookAroundCommands } from "../../agent-sim/demo/look-around.js";
import { CampaignService } from "../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { PlanService } from "../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";
import {
  createGuideWorld,
  GUIDE_SECTIONS,
  type GuideWorld,
  keygen,
  registerRelease,
  startGuideControl,
  type Typed,
  writeAgentBinary,
  writeGuideHealthChecks,
} from "./printed-commands-fixture.js";

describe("the operator guide's campaign commands and the demo's", { timeout: 400_000 }, () => {
  let world: GuideWorld | undefined;
  afterAll(async () => {
    await world?.cleanup();
  });

  it("runs as printed against a real Control", async () => {
    world = await createGuideWorld(GUIDE_SECTIONS.campaigns);
    const w = world;
    // The releases of the guide's section 3, signed and registered out of sight: 1.4.0, 1.5.0
    // with the guide's health checks, and 2.4.0, whose sequence is above both.
    const pins = [await keygen(w, "alice.key"), await keygen(w, "bob.key")];
    await writeAgentBinary(w);
    await w.guide(
      "agentctl release manifest --version 1.4.0 --sequence 14 --artifact linux-amd64=dist/agent-linux-amd64 --url-base https://artifacts.example/agent --out mirror-manifest.json",
    );
    expect(await readFile(join(w.work, "mirror-manifest.json"), "utf8")).toContain(
      '"url": "https://artifacts.example/agent/agent-linux-amd64"',
    );
    const { tc } = await startGuideControl(w, pins);
    await writeGuideHealthChecks(w);
    await registerRelease(w, "1.4.0", 14, ["--expires", "720h"]);
    await registerRelease(w, "1.5.0", 15, ["--health", "health.json"]);
    await registerRelease(w, "2.4.0", 24, ["--expires", "720h"]);

    const campaigns = tc.client(CampaignService);
    const newest = async () => (await campaigns.listCampaigns({})).campaigns[0]?.id ?? "";
    const abortAndWait = async (id: string) => {
      await campaigns.abortCampaign({ id, rollback: true, reason: "next example" });
      for (let i = 0; i < 600; i++) {
        const { campaign } = await campaigns.getCampaign({ id, summaryOnly: true });
        if (campaign?.finishedAt !== undefined) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`campaign ${id} did not finish after its abort`);
    };
    await w.guide("agentctl campaign plan --version 1.4.0");
    const windowed = await w.guide(
      'agentctl campaign start --version 1.4.0 --window "Mon-Fri 02:00-04:00 Europe/Berlin" --window "Sat,Sun 01:00-06:00 Europe/Berlin"',
    );
    expect(windowed.output).toMatch(/Start upgrading \d+ node\(s\) to 1\.4\.0\? \[y\/N\]/);
    const windowedId = await newest();
    await abortAndWait(windowedId);
    await w.guide(
      "agentctl campaign start --version 1.4.0 --ramp 10/min×2 --ramp-max 200/min --ramp-step 30m",
    );
    await abortAndWait(await newest());
    await w.guide(
      "agentctl campaign start --version 1.4.0 --gate 'prometheus http://prometheus:9090 sum(rate(http_errors_total[5m])) / sum(rate(http_requests_total[5m])) < 0.01' --gate 'webhook https://checks.example/agent-rollout' --gate-grace 2m",
    );
    await abortAndWait(await newest());

    await w.guide("agentctl campaign start --version 1.4.0 --progress-deadline 45m --yes");
    await abortAndWait(await newest());

    await w.guide(
      "agentctl campaign start --version 1.4.0 --batches 5:30m,25:30m,50:30m,100:30m --threshold 5 --max-failures 20 --min-canaries 3",
    );
    await abortAndWait(await newest());

    await w.guide("agentctl campaign start --version 1.4.0 --max-downloads 200");
    await abortAndWait(await newest());

    // A campaign as a file: the guide's campaign.yaml, planned, started, shown back as a file.
    const guide = await readFile(join(import.meta.dirname, "../../docs/operator-guide.md"), "utf8");
    const file = /```yaml\n(# campaign\.yaml\n[^`]*)```/.exec(guide)?.[1];
    expect(file).toBeDefined();
    await writeFile(join(w.work, "campaign.yaml"), file ?? "");
    const planned = await w.guide("agentctl campaign plan -f campaign.yaml");
    expect(planned.output).toMatch(/Plan for agent 1\.4\.0: /);
    await w.guide("agentctl campaign start -f campaign.yaml");
    const fromFile = await newest();
    await w.guide("agentctl campaign show <id> -o yaml > running.yaml", { "<id>": fromFile });
    expect(await w.quietly(["campaign", "plan", "-f", "running.yaml"])).toMatch(
      /Plan for agent 1\.4\.0: /,
    );
    await abortAndWait(fromFile);

    await w.guide('agentctl campaign start --version 1.4.0 --reason "CVE-2026-1234"');
    const cve = await newest();
    await w.guide("agentctl campaign watch <id>", { "<id>": cve });
    await w.guide("agentctl campaign watch <id> --events", { "<id>": cve });
    const summary = await w.guide("agentctl campaign show <id>", { "<id>": cve });
    expect(summary.output).toContain(`Every node: agentctl campaign show ${cve} --nodes`);
    await w.guide("agentctl campaign show <id> --state failed,timed_out -o wide", {
      "<id>": cve,
    });
    const why = await w.guide("agentctl campaign why <id>", { "<id>": cve });
    expect(why.output).toContain("nothing: the campaign has ended completed");
    await w.guide("agentctl campaign list --phase running");
    await w.guide("agentctl audit list --campaign <id>", { "<id>": cve });
    const ui = await w.guide("agentctl ui");
    expect(ui.output).toContain("/ui/#token=");

    // Deferral: a campaign to the release with health checks that lets nodes defer.
    await w.guide("agentctl campaign start --version 1.5.0 --max-defer 2h --yes");
    const deferring = await newest();
    const deferShown = await w.guide("agentctl campaign show c-…", { "c-…": deferring });
    expect(deferShown.output).toContain("Max defer");
    await abortAndWait(deferring);

    // Convergence and plans.
    await w.guide(
      "agentctl campaign start --version 2.4.0 --pool prod --batches 5:30m,25:30m,100:30m",
    );
    const prod = await newest();
    await abortAndWait(prod);
    await w.guide("agentctl desired list");
    await w.guide("agentctl campaign list");
    await w.guide(
      'agentctl plan start --version 2.4.0 --groups dev,staging,prod --wait 24h --batches 5:30m,25:30m,100:30m --threshold 2 --reason "spring release"',
    );
    const plan = (await tc.client(PlanService).listPlans({})).plans[0]?.id ?? "";
    expect(plan).not.toBe("");
    await w.guide("agentctl plan show p-20250301-101500-1a2b3c", {
      "p-20250301-101500-1a2b3c": plan,
    });
    await w.guide('agentctl plan abort p-20250301-101500-1a2b3c --reason "hold for the freeze"', {
      "p-20250301-101500-1a2b3c": plan,
    });
    const plans = await w.guide("agentctl plan list");
    expect(plans.output).toMatch(new RegExp(`${plan}\\s+aborted`));

    // Yanking the guide's release last: nothing after it targets 1.4.0.
    const yank = await w.guide(
      'agentctl release yank 1.4.0 --reason "corrupts the cache on ext4" --yes',
    );
    expect(yank.output).toContain("release 1.4.0 yanked");
    const onIt = await w.guide("agentctl node list --version 1.4.0");
    expect(onIt.output).toMatch(/1\.4\.0/);
    // Pruning: what it would free first, then the bytes of what nothing needs.
    const dry = await w.guide("agentctl release prune --dry-run");
    expect(dry.output).not.toMatch(/error/i);
    await w.guide("agentctl release prune --keep 3 --yes");
    expect(w.notRun()).toEqual([]);

    // The demo's closing commands, as a script would run them (no terminal): the completed
    // campaign is the one over prod that was aborted (its canceled nodes are retried).
    for (const { command } of lookAroundCommands(prod, windowedId)) {
      const typed = await new Promise<Typed>((resolveTyped) => {
        const child = spawn("/bin/bash", ["-c", command], {
          cwd: w.work,
          env: w.env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.setEncoding("utf8").on("data", (c: string) => {
          output += c;
        });
        child.stderr.setEncoding("utf8").on("data", (c: string) => {
          output += c;
        });
        child.once("close", (code) => resolveTyped({ code: code ?? 1, output }));
      });
      expect(typed.code, `${command}\n${typed.output}`).toBe(0);
    }
  });
});
