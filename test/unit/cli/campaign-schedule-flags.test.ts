import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { parseFlags, UsageError } from "../../../cli/args.js";
import { formatCampaignSummary } from "../../../cli/commands/campaign-format.js";
import { SPEC_FLAGS, specFromFlags } from "../../../cli/commands/campaign-spec.js";
import { CampaignSchema } from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

const specOf = (...argv: string[]) =>
  specFromFlags(parseFlags(["--version=1.2.0", ...argv], SPEC_FLAGS).values);

describe("agentctl's window, ramp and gate flags", () => {
  it("sends every window in its canonical form, a ramp with its maximum and step, and gates with their grace", () => {
    const spec = specOf(
      "--window",
      "mon-fri 02:00-04:00 Europe/Berlin",
      "--window",
      "Sat,Sun 22:00-02:00",
      "--ramp",
      "10/min×2",
      "--ramp-max",
      "3/s",
      "--ramp-step",
      "30m",
      "--gate",
      "prometheus http://prom:9090 sum(rate(errors_total[5m])) < 0.05",
      "--gate",
      "webhook https://hooks.example/check",
      "--gate-grace",
      "2m",
    );
    expect(spec.windows).toEqual(["Mon-Fri 02:00-04:00 Europe/Berlin", "Sat,Sun 22:00-02:00 UTC"]);
    expect(spec.ramp?.startPerMinute).toBe(10);
    expect(spec.ramp?.factor).toBe(2);
    expect(spec.ramp?.maxPerMinute).toBe(180);
    expect(Number(spec.ramp?.step?.seconds)).toBe(1800);
    expect(spec.gates).toEqual([
      "prometheus http://prom:9090 sum(rate(errors_total[5m])) < 0.05",
      "webhook https://hooks.example/check",
    ]);
    expect(Number(spec.gateGrace?.seconds)).toBe(120);
  });

  it("accepts x for × and leaves the ramp, windows and gates unset when not given", () => {
    expect(specOf("--ramp", "5/h x 3").ramp?.factor).toBe(3);
    const plain = specOf();
    expect(plain.ramp).toBeUndefined();
    expect(plain.windows).toEqual([]);
    expect(plain.gates).toEqual([]);
  });

  it.each([
    [["--window", "Mon 25:00-26:00"], /invalid --window: .*"25:00" is not a time/],
    [["--window", "Mon 02:00-04:00 Mars/Olympus"], /"Mars\/Olympus" is not a time zone/],
    [["--ramp", "ten/min"], /invalid --ramp: .*not a rate/],
    [["--ramp", "10/min×0.5"], /the factor must be a number ≥ 1/],
    [["--ramp-max", "5/min"], /--ramp-max and --ramp-step need --ramp/],
    [["--ramp", "1/min", "--batches", "5:30m,100:30m"], /--ramp replaces --batches/],
    [["--gate", "prometheus not-a-url up"], /invalid --gate: .*not an http\(s\) URL/],
    [["--gate", "ssh http://x"], /unknown kind "ssh"/],
  ])("refuses %j with a usage error naming the flag", (argv, message) => {
    expect(() => specOf(...argv)).toThrow(UsageError);
    expect(() => specOf(...argv)).toThrow(message);
  });
});

describe("agentctl campaign show", () => {
  it("lists a campaign's windows, ramp and gates, and nothing of them when unset", () => {
    const spec = specOf(
      "--window",
      "Mon-Fri 02:00-04:00 Europe/Berlin",
      "--ramp",
      "10/min×2",
      "--ramp-max",
      "200/min",
      "--ramp-step",
      "30m",
      "--gate",
      "webhook https://hooks.example/check",
      "--gate-grace",
      "2m",
    );
    const text = formatCampaignSummary(create(CampaignSchema, { id: "c1", spec }));
    expect(text).toMatch(/Windows:\s+Mon-Fri 02:00-04:00 Europe\/Berlin/);
    expect(text).toMatch(/Ramp:\s+10\/min ×2, max 200\/min, steps of 1800 s/);
    expect(text).toMatch(
      /Gates:\s+webhook https:\/\/hooks.example\/check \(unreachable fails after 120 s\)/,
    );
    const plain = formatCampaignSummary(create(CampaignSchema, { id: "c2", spec: specOf() }));
    expect(plain).not.toMatch(/Windows|Ramp|Gates/);
  });
});

describe("agentctl campaign show's pacing", () => {
  it("shows reconnect timeout, config grace, soak, concurrency and disruption budget as Control stored them", () => {
    const spec = specOf(
      "--reconnect-timeout",
      "15m",
      "--config-grace",
      "45s",
      "--soak",
      "5m",
      "--concurrency",
      "20",
      "--disruption-budget",
      "10",
    );
    const text = formatCampaignSummary(create(CampaignSchema, { id: "c1", spec }));
    expect(text).toMatch(/^Reconnect timeout:\s+15m$/m);
    expect(text).toMatch(/^Config grace:\s+45s$/m);
    expect(text).toMatch(/^Soak:\s+5m$/m);
    expect(text).toMatch(/^Concurrency:\s+20 nodes in flight at most$/m);
    expect(text).toMatch(/^Disruption budget:\s+10% of each pool$/m);
  });

  it("shows a dash where a spec leaves them unset (Control stores them resolved)", () => {
    const text = formatCampaignSummary(create(CampaignSchema, { id: "c2", spec: specOf() }));
    expect(text).toMatch(/^Reconnect timeout:\s+-$/m);
    expect(text).toMatch(/^Config grace:\s+-$/m);
    expect(text).toMatch(/^Soak:\s+none$/m);
    expect(text).toMatch(/^Concurrency:\s+the whole batch$/m);
    expect(text).toMatch(/^Disruption budget:\s+-$/m);
  });
});
