import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../control/clock.js";
import type { ReleaseKeyPair } from "../../control/shared/release/index.js";
import { ReleaseService } from "../../proto/gen/agentcontrol/admin/v1/release_pb.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { makeKeys, makeRelease } from "../helpers/releases.js";

describe("release registry", () => {
  let tc: TestControl;
  let keys: ReleaseKeyPair[];
  beforeAll(async () => {
    keys = await makeKeys(3);
    tc = await startTestControl({
      config: { release: { pins: keys.map((k) => k.pin), threshold: 2 } },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const releases = () => tc.client(ReleaseService);
  const register = async (release: { envelope: Uint8Array; files: Map<string, Uint8Array> }) =>
    await releases().registerRelease({
      envelope: release.envelope,
      artifacts: [...release.files].map(([platform, content]) => ({ platform, content })),
    });
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectError);
    return error as ConnectError;
  };

  it("registers a release signed by two distinct pinned keys, and again as a no-op", async () => {
    const release = await makeRelease({
      version: "1.1.0",
      sequence: 10,
      keys: [keys[0]!, keys[1]!],
    });
    const first = await register(release);
    expect(first.created).toBe(true);
    expect(first.release?.sequence).toBe(10n);
    expect(first.release?.signerKeyIds).toHaveLength(2);
    const again = await register(release);
    expect(again.created).toBe(false);
    const listed = await releases().listReleases({});
    expect(listed.releases.map((r) => r.version)).toEqual(["1.1.0"]);
    const got = await releases().getRelease({ version: "1.1.0" });
    expect(Buffer.from(got.envelope).equals(Buffer.from(release.envelope))).toBe(true);
  });

  it("serves uploaded artifacts at /downloads/agent/{version}/{platform}", async () => {
    const got = await releases().getRelease({ version: "1.1.0" });
    const artifact = got.release?.artifacts.find((a) => a.platform === "linux-amd64");
    expect(artifact?.servedByControl).toBe(true);
    const response = await fetch(artifact?.url ?? "");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("agent 1.1.0 for linux-amd64\n");
    expect((await fetch(`${tc.adminUrl}/downloads/agent/9.9.9/linux-amd64`)).status).toBe(404);
  });

  it("refuses one valid signature counted twice under threshold 2", async () => {
    const release = await makeRelease({
      version: "1.2.0",
      sequence: 11,
      keys: [keys[0]!, keys[0]!],
    });
    const error = await refusal(register(release));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/insufficient_signatures/);
  });

  it("refuses an expired release", async () => {
    const release = await makeRelease({
      version: "1.2.0",
      sequence: 11,
      keys: [keys[0]!, keys[1]!],
      expires: new Date(Date.now() - 60_000),
    });
    expect((await refusal(register(release))).rawMessage).toMatch(/expired/);
  });

  it("refuses a manifest for another product", async () => {
    const release = await makeRelease({
      version: "1.2.0",
      sequence: 11,
      keys: [keys[0]!, keys[1]!],
      rawManifest: (m) => ({ ...m, product: "database" }),
    });
    expect((await refusal(register(release))).rawMessage).toMatch(/wrong_product/);
  });

  it("refuses a sequence equal to or below the newest registered one", async () => {
    for (const sequence of [10, 9]) {
      const release = await makeRelease({
        version: `1.3.${sequence}`,
        sequence,
        keys: [keys[1]!, keys[2]!],
      });
      const error = await refusal(register(release));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toMatch(/never moves back/);
    }
  });

  it("refuses a different envelope for a version already registered", async () => {
    const release = await makeRelease({
      version: "1.1.0",
      sequence: 12,
      keys: [keys[1]!, keys[2]!],
    });
    const error = await refusal(register(release));
    expect(error.code).toBe(Code.AlreadyExists);
    expect(error.rawMessage).toMatch(/already registered/);
  });

  it("refuses a huge sequence with fewer than threshold signatures (no fast-forward)", async () => {
    const release = await makeRelease({
      version: "99.0.0",
      sequence: Number.MAX_SAFE_INTEGER,
      keys: [keys[2]!],
    });
    expect((await refusal(register(release))).rawMessage).toMatch(/insufficient_signatures/);
    const listed = await releases().listReleases({});
    expect(listed.releases.map((r) => r.version)).toEqual(["1.1.0"]);
  });

  it("refuses a release whose artifact file was not uploaded", async () => {
    const release = await makeRelease({
      version: "1.4.0",
      sequence: 20,
      keys: [keys[0]!, keys[2]!],
    });
    const error = await refusal(releases().registerRelease({ envelope: release.envelope }));
    expect(error.rawMessage).toMatch(/was not uploaded/);
  });

  it("refuses a viewer", async () => {
    const release = await makeRelease({
      version: "1.5.0",
      sequence: 21,
      keys: [keys[0]!, keys[1]!],
    });
    const viewer = tc.client(ReleaseService, tc.viewerToken);
    const error = await refusal(viewer.registerRelease({ envelope: release.envelope }));
    expect(error.code).toBe(Code.PermissionDenied);
  });

  it("refuses garbage instead of an envelope, naming the problem", async () => {
    const error = await refusal(
      releases().registerRelease({ envelope: new TextEncoder().encode("{oops") }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(/malformed_envelope/);
  });
});

describe("release registry, as time passes", () => {
  let tc: TestControl;
  let key: ReleaseKeyPair;
  /** How far Control's clock runs ahead of the wall clock. */
  let aheadMs = 0;
  const clock: Clock = {
    now: () => new Date(Date.now() + aheadMs),
    sleep: systemClock.sleep,
  };
  beforeAll(async () => {
    [key] = (await makeKeys(1)) as [ReleaseKeyPair];
    tc = await startTestControl({ clock, config: { release: { pins: [key.pin] } } });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const register = async (release: { envelope: Uint8Array; files: Map<string, Uint8Array> }) =>
    await tc.client(ReleaseService).registerRelease({
      envelope: release.envelope,
      artifacts: [...release.files].map(([platform, content]) => ({ platform, content })),
    });

  it("registers the identical envelope again as a no-op once it has expired and a newer one exists", async () => {
    const hour = 3600_000;
    const old = await makeRelease({
      version: "1.0.0",
      sequence: 10,
      keys: [key],
      expires: new Date(Date.now() + hour),
    });
    expect((await register(old)).created).toBe(true);
    const newer = await makeRelease({
      version: "2.0.0",
      sequence: 20,
      keys: [key],
      expires: new Date(Date.now() + 24 * hour),
    });
    expect((await register(newer)).created).toBe(true);
    const unseen = await makeRelease({
      version: "3.0.0",
      sequence: 30,
      keys: [key],
      expires: new Date(Date.now() + hour),
    });
    aheadMs = 2 * hour;

    const again = await register(old);
    expect(again.created).toBe(false);
    expect(again.release?.version).toBe("1.0.0");
    expect(again.release?.sequence).toBe(10n);
    // Expiry still refuses an envelope that is not registered yet, by Control's clock.
    const error = await register(unseen).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    expect((error as ConnectError).rawMessage).toMatch(/expired/);
    const listed = await tc.client(ReleaseService).listReleases({});
    expect(listed.releases.map((r) => r.version).sort()).toEqual(["1.0.0", "2.0.0"]);
  });
});
