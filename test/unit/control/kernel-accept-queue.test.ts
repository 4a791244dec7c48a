import { describe, expect, it } from "vitest";
import { readKernelAcceptQueueCap } from "../../../control/shared/kernel-accept-queue.js";

describe("the kernel's cap on accept queues", () => {
  it.each([
    ["the number", "4096\n", 4096],
    ["nothing from a negative number", "-1\n", undefined],
    ["nothing from zero", "0\n", undefined],
    ["nothing from garbage", "lots\n", undefined],
    ["nothing from an empty file", "", undefined],
  ])("reads %s", (_name, text, expected) => {
    expect(readKernelAcceptQueueCap(() => text)).toBe(expected);
  });

  it("is unknown where /proc/sys/net/core/somaxconn cannot be read", () => {
    expect(
      readKernelAcceptQueueCap(() => {
        throw new Error("ENOENT");
      }),
    ).toBeUndefined();
  });

  it("is read from this machine", () => {
    expect(readKernelAcceptQueueCap()).toBeGreaterThan(0);
  });
});
