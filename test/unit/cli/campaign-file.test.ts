import { create, equals } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseFlags, UsageError } from "../../../cli/args.js";
import { specFields } from "../../../cli/commands/campaign-fields.js";
import { specFromDocument } from "../../../cli/commands/campaign-file.js";
import { SPEC_FLAGS, specFromFlags } from "../../../cli/commands/campaign-spec.js";
import { parseFieldText } from "../../../cli/flag-file.js";
import { tableJson } from "../../../cli/table-json.js";
import {
  CampaignPhase,
  CampaignSchema,
  CampaignSpecSchema,
  GetCampaignResponseSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { type FakeControl, startFakeControl } from "./fake-control.js";
import { runCli } from "./run-cli.js";

/** Every flag of `campaign start` but --batches (a ramp replaces it), as typed. */
const EVERY_FLAG = [
  ["--version", "1.4.0"],
  ["--threshold", "2"],
  ["--concurrency", "10"],
  ["--on-breach", "pause"],
  ["--disruption-budget", "10"],
  ["--selector", "env=prod"],
  ["--selector", "tier=web"],
  ["--pool", "eu"],
  ["--node", "n1"],
  ["--exclude-node", "n2"],
  ["--exclude-tag", "frozen=yes"],
  ["--reconnect-timeout", "15m"],
  ["--config-grace", "2m"],
  ["--soak", "5m"],
  ["--progress-deadline", "2h"],
  ["--max-failures", "3%"],
  ["--min-canaries", "3"],
  ["--max-downloads", "50"],
  ["--max-defer", "2h"],
  ["--reason", "CVE-2026-1234"],
  ["--window", "Mon-Fri 02:00-04:00 Europe/Berlin"],
  ["--ramp", "10/min×2"],
  ["--ramp-max", "200/min"],
  ["--ramp-step", "30m"],
  ["--gate", "webhook https://checks.example/agent-rollout"],
  ["--gate-grace", "2m"],
].flat();

const FILE = `# the same campaign as EVERY_FLAG
version: 1.4.0
threshold: 2
concurrency: 10
on-breach: pause
disruption-budget: 10
selector: { env: prod, tier: web }
pool: [eu]
node: n1
exclude-node: [n2]
exclude-tag: ["frozen=yes"]
reconnect-timeout: 15m
config-grace: 2m
soak: 5m
progress-deadline: 2h
max-failures: 3%
min-canaries: 3
max-downloads: 50
max-defer: 2h
reason: CVE-2026-1234
window:
  - Mon-Fri 02:00-04:00 Europe/Berlin
ramp: 10/min×2
ramp-max: 200/min
ramp-step: 30m
gate: [webhook https://checks.example/agent-rollout]
gate-grace: 2m
`;

const fromFlags = (argv: string[]) => specFromFlags(parseFlags(argv, SPEC_FLAGS).values);
const fromText = async (text: string) =>
  specFromDocument(await parseFieldText(text, "campaign.yaml"), "campaign.yaml");

describe("a campaign as a file", () => {
  it("takes a field for every flag and builds the spec the flags build", async () => {
    const named = new Set(FILE.split("\n").flatMap((l) => /^([a-z-]+):/.exec(l)?.[1] ?? []));
    expect([...named].sort()).toEqual(
      Object.keys(SPEC_FLAGS)
        .filter((f) => f !== "batches")
        .sort(),
    );
    expect(equals(CampaignSpecSchema, await fromText(FILE), fromFlags(EVERY_FLAG))).toBe(true);
  });

  it("reads batches, and JSON as well as YAML", async () => {
    const spec = await fromText('{"version": "1.10.0", "batches": "5:30m,100:1h", "threshold": 0}');
    expect(spec.targetVersion).toBe("1.10.0");
    expect(spec.failureThresholdPercent).toBe(0);
    expect(spec.batches.map((b) => b.percent)).toEqual([5, 100]);
  });

  it.each([
    [
      "treshold: 5\nversion: 1.4.0",
      'campaign.yaml: unknown field "treshold"; did you mean "threshold"?',
    ],
    [
      "version: 1.4.0\nthreshold: 101",
      'campaign.yaml: invalid percentage "101" for field "threshold": expected a whole number 0 to 100',
    ],
    ["threshold: 5", 'campaign.yaml: missing required field "version"'],
    ["version: [1.4.0]", 'campaign.yaml: field "version" takes one value, not a list or mapping'],
    ["version: 1.4.0\npool: {a: b}", 'campaign.yaml: field "pool" must be a list of text values'],
    ["- version", 'campaign.yaml: expected a mapping of fields, such as "version: 1.4.0"'],
    ["version: 1.4.0\nversion: 1.5.0", "campaign.yaml: not YAML or JSON: "],
    [
      "version: 1.4.0\nramp: 10/min\nbatches: 5,100",
      'campaign.yaml: field "ramp" replaces field "batches": give one or the other',
    ],
  ])("refuses %j: %s", async (text, message) => {
    const error = await fromText(text).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message.startsWith(message)).toBe(true);
  });

  it("prints a spec in fields that read back to the same spec (batches, or a ramp)", async () => {
    for (const argv of [
      EVERY_FLAG,
      ["--version", "1.4.0", "--batches", "5:30m,25:30m,100:1h30m"],
    ]) {
      const spec = fromFlags(argv);
      const text = stringify(specFields(spec));
      expect(equals(CampaignSpecSchema, await fromText(text), spec)).toBe(true);
    }
  });

  it("takes what campaign show -o yaml printed: its campaign.spec, the rest ignored", async () => {
    const spec = fromFlags(EVERY_FLAG);
    const shown = create(GetCampaignResponseSchema, {
      campaign: create(CampaignSchema, { id: "c1", phase: CampaignPhase.COMPLETED, spec }),
      nodes: [{ nodeId: "n1" }],
    });
    const text = stringify(tableJson(GetCampaignResponseSchema, shown));
    expect(equals(CampaignSpecSchema, await fromText(text), spec)).toBe(true);
    const typo = await fromText(text.replace("phase:", "phsae:")).catch((e: unknown) => e);
    expect((typo as Error).message).toBe(
      'campaign.yaml: unknown field "campaign.phsae"; did you mean "phase"?',
    );
  });
});

describe("campaign plan|start -f", () => {
  let fake: FakeControl;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    fake = await startFakeControl();
    env = { AGENTCTL_SERVER: fake.url, AGENTCTL_TOKEN: "operator-token" };
    const { mkdtemp, writeFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    dir = await mkdtemp(`${tmpdir()}/campaign-file-`);
    await writeFile(`${dir}/campaign.yaml`, FILE);
  });
  afterAll(async () => {
    await fake.stop();
    const { rm } = await import("node:fs/promises");
    await rm(dir, { recursive: true, force: true });
  });

  it("starts the campaign the file describes", async () => {
    const result = await runCli(["campaign", "start", "-f", `${dir}/campaign.yaml`, "--yes"], {
      env,
    });
    expect(result.stderr).toContain("follow it with");
    expect(result.code).toBe(0);
    const sent = fake.state.campaigns.at(-1)?.spec;
    expect(sent && equals(CampaignSpecSchema, sent, fromFlags(EVERY_FLAG))).toBe(true);
  });

  it("refuses a spec flag beside -f, naming it", async () => {
    const result = await runCli(
      ["campaign", "plan", "-f", `${dir}/campaign.yaml`, "--threshold", "3"],
      { env },
    );
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "agentctl: --threshold and -f both set fields: with -f the file is the whole spec; edit the file instead\n",
    });
  });

  it("names a file it cannot read", async () => {
    const result = await runCli(["campaign", "plan", "-f", `${dir}/nope.yaml`], { env });
    expect(result.stderr).toBe(`agentctl: cannot read ${dir}/nope.yaml: no such file\n`);
    expect(result.code).toBe(2);
  });
});
