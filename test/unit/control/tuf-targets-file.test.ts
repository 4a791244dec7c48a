/**
 * The release channel's targets.json is read once per change: the check every campaign start
 * makes reads the file the first time, answers later checks from what it read while the file
 * is unchanged, and reads it again once it changed (or was changed too recently for its
 * timestamps to show the next change). Real signed metadata on disk; the reads counted at the
 * file system calls the check makes.
 */
import { rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listedCheck } from "../../../control/tuf/listed.js";
import { NODE_TARGETS_IO, RACY_MS, type TargetsFileIo } from "../../../control/tuf/targets-file.js";
import { type TufChannel, writeTufChannel } from "../../helpers/tuf-channel.js";

/** Node's file system, counting the reads of targets.json; `now` as told. */
function countingIo(now: () => number): TargetsFileIo & { reads: number } {
  const io = {
    reads: 0,
    stat: NODE_TARGETS_IO.stat,
    readFile: (path: string) => {
      if (path.endsWith("targets.json")) io.reads += 1;
      return NODE_TARGETS_IO.readFile(path);
    },
    now,
  };
  return io;
}

/** A clock that says every change on disk is older than {@link RACY_MS}. */
const settled = () => Date.now() + RACY_MS;

const UNLISTED = /2\.0\.0 is not listed in the release channel's TUF targets/;

describe("the release channel's targets.json, read once per change", () => {
  let channel: TufChannel | undefined;
  afterEach(async () => {
    if (channel) await rm(join(channel.dir, ".."), { recursive: true, force: true });
    channel = undefined;
  });

  it("does not read targets.json again for a second start while the file is unchanged", async () => {
    channel = await writeTufChannel([{ version: "2.0.0", sequence: 2 }]);
    const io = countingIo(settled);
    const check = listedCheck(channel.dir, io);
    expect(await check("2.0.0", 2)).toBeUndefined();
    expect(await check("2.0.0", 2)).toBeUndefined();
    expect(await check("1.5.0", 1)).toMatch(/1\.5\.0 is not listed/);
    expect(io.reads).toBe(1);
  });

  it("reads targets.json again once it changed, and answers from the new listing", async () => {
    channel = await writeTufChannel([{ version: "2.0.0", sequence: 2 }]);
    const io = countingIo(settled);
    const check = listedCheck(channel.dir, io);
    expect(await check("2.0.0", 2)).toBeUndefined();
    await channel.list([
      { version: "1.5.0", sequence: 1 },
      { version: "1.6.0", sequence: 3 },
    ]);
    expect(await check("2.0.0", 2)).toMatch(UNLISTED);
    expect(await check("1.6.0", 3)).toBeUndefined();
    expect(io.reads).toBe(2);
  });

  it("reads a targets.json changed within the file system's clock tick of its read again", async () => {
    channel = await writeTufChannel([{ version: "2.0.0", sequence: 2 }]);
    const { ctimeMs } = await stat(join(channel.dir, "targets.json"));
    const io = countingIo(() => ctimeMs + 1);
    const check = listedCheck(channel.dir, io);
    expect(await check("2.0.0", 2)).toBeUndefined();
    expect(await check("2.0.0", 2)).toBeUndefined();
    expect(io.reads).toBe(2);
  });

  it("keeps nothing of a targets.json that cannot be parsed, and reads the repaired one", async () => {
    channel = await writeTufChannel([{ version: "2.0.0", sequence: 2 }]);
    const io = countingIo(settled);
    const check = listedCheck(channel.dir, io);
    const path = join(channel.dir, "targets.json");
    await writeFile(path, "{ not json");
    expect(await check("2.0.0", 2)).toMatch(/targets\.json cannot be read/);
    await channel.list([{ version: "2.0.0", sequence: 2 }]);
    expect(await check("2.0.0", 2)).toBeUndefined();
    expect(await check("2.0.0", 2)).toBeUndefined();
    expect(io.reads).toBe(2);
  });
});
