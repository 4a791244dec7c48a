import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { parseFlags } from "../../../cli/args.js";
import { SPEC_FLAGS, specFromFlags } from "../../../cli/commands/campaign-spec.js";
import {
  CampaignSpecSchema,
  OnBreach,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";
import { EMPTY_FIELDS, type SpecFields, specFromFields } from "../../../ui/spec-form.js";

const form = (over: Partial<SpecFields>): SpecFields => ({ ...EMPTY_FIELDS, ...over });

describe("the start form's spec", () => {
  it("sends what agentctl campaign start sends for the same flags, defaults left unset", () => {
    const parsed = specFromFields(
      form({
        version: " 2.0.0 ",
        reason: "CVE-2026-1234",
        selector: "region=eu, env=prod",
        pools: "db web",
        excludeNodes: "node-7",
        excludeTags: "hold=true",
        batches: "5:30m,25:1h30m,100",
        threshold: "10",
        onBreach: "pause",
        windows: "Mon-Fri 02:00-04:00 Europe/Berlin\n\n  Sat 01:00-02:00 UTC ",
        gates: "webhook https://hooks.example/x",
        gateGrace: "2m",
        soak: "45s",
      }),
    );
    expect(parsed).toEqual({
      ok: true,
      spec: {
        targetVersion: "2.0.0",
        reason: "CVE-2026-1234",
        selector: { labels: { region: "eu", env: "prod" }, pools: ["db", "web"], nodeIds: [] },
        exclude: { nodeIds: ["node-7"], tags: { hold: "true" } },
        batches: [
          { percent: 5, minDuration: { seconds: 1800n, nanos: 0 } },
          { percent: 25, minDuration: { seconds: 5400n, nanos: 0 } },
          { percent: 100 },
        ],
        concurrency: 0,
        onBreach: OnBreach.PAUSE,
        failureThresholdPercent: 10,
        windows: ["Mon-Fri 02:00-04:00 Europe/Berlin", "Sat 01:00-02:00 UTC"],
        gates: ["webhook https://hooks.example/x"],
        gateGrace: { seconds: 120n, nanos: 0 },
        soak: { seconds: 45n, nanos: 0 },
      },
    });
  });

  it("reads a ramp with its maximum and step instead of batches", () => {
    const parsed = specFromFields(
      form({ version: "2.0.0", ramp: "10/min×3", rampMax: "2/s", rampStep: "5m" }),
    );
    expect(parsed.ok && parsed.spec.ramp).toEqual({
      startPerMinute: 10,
      factor: 3,
      maxPerMinute: 120,
      step: { seconds: 300n, nanos: 0 },
    });
    expect(parsed.ok && parsed.spec.batches).toEqual([]);
  });

  it.each([
    [{ version: "" }, "version", "the target version is required"],
    [{ batches: "5:30,100" }, "batches", '"30" is not a duration such as 30m, 1h30m or 45s'],
    [{ batches: "five" }, "batches", '"five" is not PERCENT[:DURATION], e.g. 5:30m'],
    [{ selector: "region" }, "selector", '"region" is not key=value'],
    [{ threshold: "101" }, "threshold", '"101" is not a whole number from 0 to 100'],
    [{ concurrency: "-1" }, "concurrency", '"-1" is not a whole number from 0 to 1000000'],
    [
      { ramp: "10/min", batches: "100" },
      "ramp",
      "a ramp replaces the batches: give one or the other",
    ],
    [{ rampMax: "5/min" }, "ramp", "a ramp maximum or step needs a ramp"],
    [{ ramp: "fast" }, "ramp", expect.stringContaining('"fast"')],
    [{ maxDownloads: "0" }, "maxDownloads", '"0" is not a whole number from 1 to 1000000'],
    [{ maxDefer: "169h" }, "maxDefer", '"169h" is more than 168h (7 days)'],
    [{ maxDefer: "1d" }, "maxDefer", '"1d" is not a duration such as 30m, 1h30m or 45s'],
    [
      { reconnectTimeout: "1.5h" },
      "reconnectTimeout",
      '"1.5h" is not a duration such as 30m, 1h30m or 45s',
    ],
  ] as const)("refuses %j naming the field", (over, field, message) => {
    expect(specFromFields(form({ version: "2.0.0", ...over }))).toEqual({
      ok: false,
      field,
      message,
    });
  });

  it.each([
    [
      {
        version: "2.0.0",
        reason: "r",
        selector: "zone=a",
        pools: "edge db",
        nodes: "n1",
        excludeNodes: "n9",
        excludeTags: "hold=true",
        batches: "5:1m,25,100:2m",
        threshold: "10",
        concurrency: "3",
        onBreach: "stop",
        disruptionBudget: "20",
        windows: "Mon-Fri 02:00-04:00 Europe/Berlin",
        gates: "prometheus http://p:9090 up == 1\nwebhook https://hooks.example/x",
        gateGrace: "2m",
        reconnectTimeout: "5m",
        configGrace: "30s",
        soak: "1h",
        progressDeadline: "2h",
        maxDownloads: "200",
        maxDefer: "2h",
      },
      [
        "--version=2.0.0",
        "--reason=r",
        "--selector=zone=a",
        "--pool=edge",
        "--pool=db",
        "--node=n1",
        "--exclude-node=n9",
        "--exclude-tag=hold=true",
        "--batches=5:1m,25,100:2m",
        "--threshold=10",
        "--concurrency=3",
        "--on-breach=stop",
        "--disruption-budget=20",
        "--window=Mon-Fri 02:00-04:00 Europe/Berlin",
        "--gate=prometheus http://p:9090 up == 1",
        "--gate=webhook https://hooks.example/x",
        "--gate-grace=2m",
        "--reconnect-timeout=5m",
        "--config-grace=30s",
        "--soak=1h",
        "--progress-deadline=2h",
        "--max-downloads=200",
        "--max-defer=2h",
      ],
    ],
    [
      { version: "2.0.0", ramp: "10/min×3", rampMax: "200/min", rampStep: "5m" },
      ["--version=2.0.0", "--ramp=10/min×3", "--ramp-max=200/min", "--ramp-step=5m"],
    ],
    [{ version: "2.0.0" }, ["--version=2.0.0"]],
  ] as const)(
    "builds the spec agentctl campaign start builds from the same flags (%#)",
    (over, argv) => {
      const parsed = specFromFields(form(over));
      if (!parsed.ok) throw new Error(parsed.message);
      const cli = specFromFlags(parseFlags(argv, SPEC_FLAGS).values);
      expect(create(CampaignSpecSchema, parsed.spec)).toEqual(cli);
    },
  );

  it.each([
    ["maxDownloads", "max-downloads", ["0", "1", "1000000", "1000001", "x", "-3", "2.5"]],
    ["maxDefer", "max-defer", ["0s", "30m", "168h", "167h60m", "168h1s", "169h", "1.5h"]],
  ] as const)("accepts in %s exactly what agentctl accepts for --%s", (field, flag, values) => {
    for (const value of values) {
      const parsed = specFromFields(form({ version: "2.0.0", [field]: value }));
      let cli: unknown;
      try {
        cli = specFromFlags(
          parseFlags(["--version=2.0.0", `--${flag}=${value}`], SPEC_FLAGS).values,
        );
      } catch {
        cli = undefined;
      }
      expect({ value, ok: parsed.ok }).toEqual({ value, ok: cli !== undefined });
      if (parsed.ok) expect(create(CampaignSpecSchema, parsed.spec)).toEqual(cli);
    }
  });
});
