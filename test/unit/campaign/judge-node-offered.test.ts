/**
 * Judging one node: which reports and boots move an offered node forward and which do not.
 */
import { describe, expect, it } from "vitest";
import { MIN, NEW, nodeOf, OLD, reboot, report, tick } from "./harness.js";
import { ID, offered, reasons } from "./judge-node-fixture.js";

describe("what moves an offered node forward", () => {
  it("back on the target with a new boot id: verifying, recording when and on which boot", () => {
    const h = offered(["upgrade.v1", "config.v1"]);
    h.now = 3 * MIN;
    reboot(h, ID, NEW);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({
      state: "verifying",
      version: NEW,
      backAt: 3 * MIN,
      backBootId: `boot-${ID}-1`,
      graceEndsAt: 4 * MIN,
      finishedAt: undefined,
    });
    expect(reasons(h)).toContain(
      `node ${ID}: offered → verifying: back on ${NEW} with a new boot id`,
    );
  });

  it("a restart before acknowledging the offer keeps it offered, now on the new boot", () => {
    const h = offered();
    reboot(h, ID, OLD);
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "offered", offerBootId: `boot-${ID}-1` });
    expect(reasons(h)).toContain(
      `node ${ID}: offered → offered: restarted before acknowledging the offer; offered again`,
    );
    expect(h.last?.actions).toEqual([]);
  });

  it("a report from the boot it restarted on is the offer in progress, not a revert", () => {
    const h = offered();
    reboot(h, ID, OLD);
    report(h, ID, "ACCEPTED");
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "applying", offerBootId: `boot-${ID}-1` });
  });

  it("a boot on its old version while applying is a revert, even with a report from that boot", () => {
    const h = offered();
    report(h, ID, "APPLYING");
    tick(h);
    reboot(h, ID, OLD);
    report(h, ID, "APPLYING");
    tick(h);
    expect(nodeOf(h, ID)).toMatchObject({ state: "failed", code: "reverted", version: OLD });
  });

  it("refuses a report phase it does not know", () => {
    const h = offered();
    report(h, ID, "BOGUS" as never);
    expect(() => tick(h)).toThrow(/observed phase/);
  });

  it("a progress report moves it to applying, saying which", () => {
    const h = offered();
    report(h, ID, "DOWNLOADING");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("applying");
    expect(reasons(h)).toContain(`node ${ID}: offered → applying: reported DOWNLOADING`);
  });

  it("a restart announced while applying moves it to restarting", () => {
    const h = offered();
    report(h, ID, "APPLYING");
    tick(h);
    report(h, ID, "RESTARTING");
    tick(h);
    expect(nodeOf(h, ID).state).toBe("restarting");
    expect(reasons(h)).toContain(`node ${ID}: applying → restarting: restarting`);
  });

  it("never moves backwards: a progress report after the restart keeps it restarting", () => {
    const h = offered();
    report(h, ID, "RESTARTING");
    tick(h);
    report(h, ID, "APPLYING");
    const d = tick(h);
    expect(nodeOf(h, ID).state).toBe("restarting");
    expect(d.changes.nodes).toEqual([]);
  });

  it("a CONFIRMED report on the upgrade moves nothing by itself", () => {
    const h = offered();
    report(h, ID, "CONFIRMED");
    const d = tick(h);
    expect(nodeOf(h, ID).state).toBe("offered");
    expect(d.changes.nodes).toEqual([]);
  });
});
