import { describe, expect, it } from "vitest";
import { parseFlags, UsageError } from "../../../cli/args.js";
import { SPEC_FLAGS, specFromFlags } from "../../../cli/commands/campaign-spec.js";

const specOf = (...argv: string[]) =>
  specFromFlags(parseFlags(["--version=1.2.0", ...argv], SPEC_FLAGS).values);

describe("agentctl's --max-downloads", () => {
  it("sends the budget given, and 0 (none) without the flag", () => {
    expect(specOf("--max-downloads", "200").maxDownloads).toBe(200);
    expect(specOf().maxDownloads).toBe(0);
  });

  it.each([[["--max-downloads", "0"]], [["--max-downloads", "-3"]], [["--max-downloads", "many"]]])(
    "refuses %j with a usage error naming the flag",
    (argv) => {
      expect(() => specOf(...argv)).toThrow(UsageError);
      expect(() => specOf(...argv)).toThrow(/max-downloads/);
    },
  );
});
