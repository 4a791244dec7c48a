import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseFlags } from "../../../cli/args.js";
import {
  DESIRED_FLAGS,
  desiredFromFlags,
  desiredFromFlagsOrFile,
} from "../../../cli/commands/desired-spec.js";
import { FILE_FLAG } from "../../../cli/flag-file.js";
import { tableJson } from "../../../cli/table-json.js";
import { DesiredVersionSchema } from "../../../proto/gen/agentcontrol/admin/v1/rollout_pb.js";

const FLAGS = { ...DESIRED_FLAGS, ...FILE_FLAG };
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "desired-file-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `desired set -f` of a file holding `text`. */
async function fromFile(text: string) {
  const path = join(dir, "desired.yaml");
  await writeFile(path, text);
  return await desiredFromFlagsOrFile(parseFlags(["-f", path], FLAGS).values);
}

describe("desired set -f", () => {
  it("takes a field for every flag and builds the request the flags build", async () => {
    const argv = [
      ...["--version", "2.4.0", "--selector", "env=prod", "--pool", "eu", "--node", "n1"],
      ...["--exclude-node", "n2", "--exclude-tag", "frozen=yes", "--max-failures", "4"],
      ...["--disruption-budget", "10", "--reason", "spring"],
    ];
    const file = [
      "version: 2.4.0",
      "selector: {env: prod}",
      "pool: [eu]",
      "node: n1",
      "exclude-node: [n2]",
      "exclude-tag: {frozen: 'yes'}",
      "max-failures: 4",
      "disruption-budget: 10",
      "reason: spring",
    ];
    expect(file.map((l) => l.split(":")[0]).sort()).toEqual(Object.keys(DESIRED_FLAGS).sort());
    expect(await fromFile(file.join("\n"))).toEqual(
      desiredFromFlags(parseFlags(argv, FLAGS).values),
    );
  });

  it("reads back a desired version as desired set -o yaml printed it", async () => {
    const d = create(DesiredVersionSchema, {
      id: "d-0123456789",
      targetVersion: "2.4.0",
      targetSequence: 24n,
      selector: { labels: { env: "prod" }, pools: ["eu"] },
      exclude: { nodeIds: ["n2"] },
      maxFailures: 3,
      disruptionBudgetPercent: 5,
      setBy: "alice",
      nodes: 10,
      converged: 7,
    });
    expect(await fromFile(stringify(tableJson(DesiredVersionSchema, d)))).toEqual({
      targetVersion: "2.4.0",
      selector: { labels: { env: "prod" }, pools: ["eu"], nodeIds: [] },
      exclude: { nodeIds: ["n2"], tags: {} },
      maxFailures: 3,
      disruptionBudgetPercent: 5,
      reason: "",
    });
  });

  it.each([
    ["version: 2.4.0\npools: [eu]", 'unknown field "pools"; did you mean "pool"?'],
    [
      "version: 2.4.0\nmax-failures: 0",
      'invalid value "0" for field "max-failures": expected 1 to 100',
    ],
    ["targetVersion: 2.4.0\nconverge: 3", 'unknown field "converge"; did you mean "converged"?'],
  ])("refuses %j, naming the field", async (text, message) => {
    await expect(fromFile(text)).rejects.toThrow(`${join(dir, "desired.yaml")}: ${message}`);
  });

  it("refuses a field flag beside -f", async () => {
    const values = parseFlags(["-f", "x.yaml", "--pool", "eu"], FLAGS).values;
    await expect(desiredFromFlagsOrFile(values)).rejects.toThrow(
      "--pool and -f both set fields: with -f the file is the whole spec; edit the file instead",
    );
  });
});
