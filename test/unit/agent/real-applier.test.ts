/**
 * The real applier on a real install directory: what an upgrade, a rollback and a confirm
 * leave on disk and in the durable state.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AgentState, initialState, loadState, saveState } from "../../../agent/agent-state.js";
import {
  artifactPath,
  installPaths,
  installVersion,
  readCurrent,
  switchCurrent,
} from "../../../agent/install-dir.js";
import { realApplier } from "../../../agent/real-applier.js";

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  dirs = [];
});

async function installed() {
  const root = await mkdtemp(join(tmpdir(), "agent-applier-"));
  dirs.push(root);
  const paths = installPaths(root);
  await installVersion(paths, "1.0.0", new TextEncoder().encode("one"));
  const state: AgentState = initialState("n1", "1.0.0");
  await saveState(paths, state);
  await switchCurrent(paths, "1.0.0");
  const log = { info() {}, warn() {}, error() {}, debug() {} };
  const applier = realApplier({ paths, state, log, persist: () => saveState(paths, state) });
  return { paths, state, applier };
}

const upgradeTo = (version: string, sequence: bigint) => ({
  version,
  sequence,
  artifact: { url: "", sha256: "", size: 3 },
});

describe("the real applier", () => {
  it("installs an upgrade beside the running version, records the switch, then moves current", async () => {
    const { paths, state, applier } = await installed();
    const failure = await applier.applyUpgrade(
      "op1",
      "1.0.0",
      upgradeTo("1.1.0", 11n),
      new TextEncoder().encode("two"),
    );
    expect(failure).toBeUndefined();
    expect(await readCurrent(paths)).toBe("1.1.0");
    expect(await readFile(artifactPath(paths, "1.1.0"), "utf8")).toBe("two");
    expect(existsSync(artifactPath(paths, "1.0.0"))).toBe(true);
    const saved = await loadState(paths);
    expect(saved).toMatchObject({
      version: "1.1.0",
      previousVersion: "1.0.0",
      switch: { kind: "upgrade", opId: "op1", from: "1.0.0", to: "1.1.0", previousBefore: "" },
    });
    expect(state.version).toBe("1.1.0");
  });

  it("refuses to reinstall the running version or to apply without the downloaded bytes", async () => {
    const { paths, applier } = await installed();
    expect(
      await applier.applyUpgrade("op1", "1.0.0", upgradeTo("1.0.0", 1n), new Uint8Array(3)),
    ).toMatchObject({ code: "apply_failed" });
    expect(await applier.applyUpgrade("op2", "1.0.0", upgradeTo("1.1.0", 1n))).toMatchObject({
      code: "apply_failed",
    });
    expect(await readCurrent(paths)).toBe("1.0.0");
  });

  it("switches current back on rollback and remembers the rollback to report", async () => {
    const { paths, state, applier } = await installed();
    await applier.applyUpgrade("op1", "1.0.0", upgradeTo("1.1.0", 11n), new Uint8Array(3));
    delete state.switch;
    expect(await applier.applyRollback("op2", "1.1.0", "1.0.0")).toBeUndefined();
    expect(await readCurrent(paths)).toBe("1.0.0");
    expect(await loadState(paths)).toMatchObject({
      version: "1.0.0",
      previousVersion: "1.1.0",
      pendingReinstate: "op2",
      switch: { kind: "rollback", from: "1.1.0", to: "1.0.0" },
    });
  });

  it("drops every other version on confirm", async () => {
    const { paths, state, applier } = await installed();
    await applier.applyUpgrade("op1", "1.0.0", upgradeTo("1.1.0", 11n), new Uint8Array(3));
    delete state.switch;
    await applier.applyConfirm("op3", "1.1.0");
    expect(existsSync(join(paths.versions, "1.0.0"))).toBe(false);
    expect(existsSync(artifactPath(paths, "1.1.0"))).toBe(true);
    expect((await loadState(paths))?.previousVersion).toBe("");
  });
});
