import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ReleaseSchema } from "../../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { startableVersions, yankedVersions } from "../../../ui/releases.js";

const release = (version: string, sequence: number, yanked = false) =>
  create(ReleaseSchema, {
    version,
    sequence: BigInt(sequence),
    ...(yanked ? { yankedAt: timestampFromDate(new Date()), yankedBy: "admin" } : {}),
  });

describe("the dashboard's releases", () => {
  const releases = [
    release("1.0.0", 10),
    release("3.0.0", 30, true),
    release("2.1.0", 21),
    release("2.0.0", 20),
  ];

  it("offers a campaign only the releases not yanked, the highest sequence first", () => {
    expect(startableVersions(releases)).toEqual(["2.1.0", "2.0.0", "1.0.0"]);
    expect(startableVersions([])).toEqual([]);
  });

  it("names exactly the yanked releases", () => {
    expect([...yankedVersions(releases)]).toEqual(["3.0.0"]);
  });
});
