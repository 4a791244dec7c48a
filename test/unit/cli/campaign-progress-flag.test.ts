import { describe, expect, it } from "vitest";
import { parseFlags, UsageError } from "../../../cli/args.js";
import { SPEC_FLAGS, specFromFlags } from "../../../cli/commands/campaign-spec.js";

const specOf = (...argv: string[]) =>
  specFromFlags(parseFlags(["--version=1.2.0", ...argv], SPEC_FLAGS).values);

describe("agentctl's --progress-deadline", () => {
  it("sends the deadline given, and none (Control's default) without the flag", () => {
    expect(Number(specOf("--progress-deadline", "45m").progressDeadline?.seconds)).toBe(2700);
    expect(specOf().progressDeadline).toBeUndefined();
  });

  it.each([
    [["--progress-deadline", "0s"], /invalid --progress-deadline: it must be longer than 0s/],
    [["--progress-deadline", "soon"], /progress-deadline/],
  ])("refuses %j with a usage error naming the flag", (argv, message) => {
    expect(() => specOf(...argv)).toThrow(UsageError);
    expect(() => specOf(...argv)).toThrow(message);
  });
});
