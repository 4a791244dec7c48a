import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createGuideWorld,
  GUIDE_SECTIONS,
  type GuideWorld,
  keygen,
  startGuideControl,
  writeAgentBinary,
  writeGuideHealthChecks,
} from "./printed-commands-fixture.js";

describe("the operator guide's release commands", { timeout: 400_000 }, () => {
  let world: GuideWorld | undefined;
  afterAll(async () => {
    await world?.cleanup();
  });

  it("runs as printed against a real Control", async () => {
    world = await createGuideWorld(GUIDE_SECTIONS.releases);
    const w = world;
    // Signing a release happens offline, before Control trusts the keys.
    const alice = (await w.guide("agentctl release keygen --out alice.key")).output.match(
      /ed25519:\S+/,
    )?.[0];
    expect(alice).toBeDefined();
    const bob = await keygen(w, "bob.key");
    await writeAgentBinary(w);
    await w.guide(
      "agentctl release manifest --version 1.4.0 --sequence 14 --artifact linux-amd64=dist/agent-linux-amd64 --expires 720h --out manifest.json",
    );
    await w.guide("agentctl release sign --key alice.key --in manifest.json --out release.json");
    await w.guide("agentctl release sign --key bob.key --in release.json --out release.json");
    await w.guide("agentctl release verify --pin <alice> --pin <bob> --threshold 2 release.json", {
      "<alice>": alice ?? "",
      "<bob>": bob,
    });

    await startGuideControl(w, [alice ?? "", bob], [{ count: 1, idPrefix: "web" }]);
    await w.guide("agentctl release register release.json --artifacts dist/");

    // Health checks: the guide's health.json.
    await writeGuideHealthChecks(w);
    const healthManifest = await w.guide(
      "agentctl release manifest --version 1.5.0 --sequence 15 --artifact linux-amd64=dist/agent-linux-amd64 --health health.json --out manifest.json",
    );
    expect(healthManifest.output).toContain("2 health check(s)");

    // The release channel as a TUF repository: the reader's keys and `tuf init` out of sight.
    const rootPin = await keygen(w, "alice-root.key");
    const targetsPin = await keygen(w, "alice-targets.key");
    const snapshotPin = await keygen(w, "snapshot.key");
    const timestampPin = await keygen(w, "timestamp.key");
    const newTargetsPin = await keygen(w, "carol-targets.key");
    await mkdir(join(w.work, "tuf"));
    await w.quietly([
      "tuf",
      "init",
      "--repo",
      "tuf",
      "--root-key",
      rootPin,
      "--targets-key",
      targetsPin,
      "--snapshot-key",
      snapshotPin,
      "--timestamp-key",
      timestampPin,
    ]);
    await w.quietly(["tuf", "sign", "--repo", "tuf", "--role", "root", "--key", "alice-root.key"]);
    await w.guide(
      "agentctl tuf add-target --repo tuf --version 1.4.0 --sequence 14 --artifact linux-amd64=dist/agent-linux-amd64",
    );
    await w.guide("agentctl tuf sign --repo tuf --role targets --key alice-targets.key");
    await w.guide("agentctl tuf rotate-root --repo tuf --targets-key <new targets pin>", {
      "<new targets pin>": newTargetsPin,
    });
    await w.guide("agentctl tuf sign --repo tuf --role root --key alice-root.key");

    // The trust section's look at a node (none is frozen here: the columns are there).
    const listed = await w.guide("agentctl node list");
    expect(listed.output).toContain("web-00001");
    const shown = await w.guide("agentctl node show web-17", { "web-17": "web-00001" });
    expect(shown.output).toContain("web-00001");
    expect(w.notRun()).toEqual([]);
  });
});
