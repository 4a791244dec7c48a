/**
 * A release that carries a new supervisor (the manifest's signed `supervisor: true`): the
 * flag is part of the signed bytes, parsed strictly, and an Agent takes it only from a
 * release that passes every check an upgrade passes: signed by its pinned keys, not below
 * its confirmed sequence, not below the highest sequence it has installed. Manifests
 * without the field stay valid and carry no supervisor.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ReleaseVerifier, type UpgradeCheckContext } from "../../../agent/core/release-check.js";
import {
  buildManifest,
  createEnvelope,
  generateKeyPair,
  parseManifest,
  type ReleaseKeyPair,
  sha256Hex,
  signEnvelope,
} from "../../../control/shared/release/index.js";
import {
  type AgentUpgrade,
  AgentUpgradeSchema,
  SignedEnvelopeSchema,
} from "../../../proto/gen/agentcontrol/v1/agent_control_pb.js";

const BYTES = new TextEncoder().encode("the agent and its supervisor, one executable\n");
const ARTIFACT = { url: "https://dl.example/agent", sha256: sha256Hex(BYTES), size: BYTES.length };
const encoder = new TextEncoder();

function manifestBytes(extra: Record<string, unknown>): Uint8Array {
  return encoder.encode(
    JSON.stringify({
      product: "agent",
      version: "2.0.0",
      sequence: 20,
      expires: "2099-01-01T00:00:00Z",
      artifacts: { "linux-amd64": ARTIFACT },
      ...extra,
    }),
  );
}

async function upgradeOf(
  key: ReleaseKeyPair,
  supervisor: boolean | undefined,
  sequence = 20,
): Promise<AgentUpgrade> {
  const payload = buildManifest({
    version: "2.0.0",
    sequence,
    expires: new Date("2099-01-01T00:00:00Z"),
    artifacts: { "linux-amd64": ARTIFACT },
    ...(supervisor === undefined ? {} : { supervisor }),
  });
  const envelope = await signEnvelope(createEnvelope(payload), key.privateKey);
  return create(AgentUpgradeSchema, {
    version: "2.0.0",
    sequence: BigInt(sequence),
    artifact: { platform: "linux-amd64", ...ARTIFACT, size: BigInt(ARTIFACT.size) },
    envelope: create(SignedEnvelopeSchema, envelope),
  });
}

function context(
  key: ReleaseKeyPair,
  over: Partial<UpgradeCheckContext> = {},
): UpgradeCheckContext {
  return {
    platform: "linux-amd64",
    confirmedSequence: 10n,
    installedSequence: 10n,
    pins: [key.pin],
    threshold: 1,
    now: new Date(),
    ...over,
  };
}

describe("the manifest's supervisor flag", () => {
  it("is parsed when true and kept in the canonical bytes", () => {
    const bytes = buildManifest({
      version: "2.0.0",
      sequence: 20,
      expires: new Date("2099-01-01T00:00:00Z"),
      artifacts: { "linux-amd64": ARTIFACT },
      supervisor: true,
    });
    expect(new TextDecoder().decode(bytes)).toContain('"supervisor": true');
    expect(parseManifest(bytes).supervisor).toBe(true);
  });

  it("is left out of the bytes when false, so a manifest without it is unchanged", () => {
    const without = buildManifest({
      version: "2.0.0",
      sequence: 20,
      expires: new Date("2099-01-01T00:00:00Z"),
      artifacts: { "linux-amd64": ARTIFACT },
    });
    const off = buildManifest({
      version: "2.0.0",
      sequence: 20,
      expires: new Date("2099-01-01T00:00:00Z"),
      artifacts: { "linux-amd64": ARTIFACT },
      supervisor: false,
    });
    expect(off).toEqual(without);
    expect(parseManifest(without).supervisor).toBeUndefined();
  });

  it.each([["yes"], [1], [null], [{}]])("refuses supervisor %j (only a boolean)", (value) => {
    expect(() => parseManifest(manifestBytes({ supervisor: value }))).toThrow(
      /supervisor must be true or false/,
    );
  });
});

describe("an Agent takes a supervisor only from a release it accepts", () => {
  it("a release signed by its pinned key that carries a supervisor is accepted with the flag", async () => {
    const key = await generateKeyPair();
    const verdict = await new ReleaseVerifier().check(await upgradeOf(key, true), context(key));
    expect(verdict).toMatchObject({ ok: true, upgrade: { version: "2.0.0", supervisor: true } });
  });

  it("a release without the flag carries no supervisor", async () => {
    const key = await generateKeyPair();
    const verdict = await new ReleaseVerifier().check(
      await upgradeOf(key, undefined),
      context(key),
    );
    expect(verdict.ok).toBe(true);
    expect(verdict.ok && verdict.upgrade.supervisor).toBeFalsy();
  });

  it("a supervisor release signed by a key the Agent does not pin is refused untrusted_release", async () => {
    const pinned = await generateKeyPair();
    const other = await generateKeyPair();
    const verdict = await new ReleaseVerifier().check(
      await upgradeOf(other, true),
      context(pinned),
    );
    expect(verdict).toMatchObject({ ok: false, code: "untrusted_release" });
  });

  it("a supervisor release below the highest sequence installed is refused sequence_rollback", async () => {
    const key = await generateKeyPair();
    const verdict = await new ReleaseVerifier().check(
      await upgradeOf(key, true, 15),
      context(key, { confirmedSequence: 10n, installedSequence: 16n }),
    );
    expect(verdict).toMatchObject({ ok: false, code: "sequence_rollback" });
  });

  it("a supervisor release below the confirmed sequence is refused sequence_rollback", async () => {
    const key = await generateKeyPair();
    const verdict = await new ReleaseVerifier().check(
      await upgradeOf(key, true, 15),
      context(key, { confirmedSequence: 16n, installedSequence: 16n }),
    );
    expect(verdict).toMatchObject({ ok: false, code: "sequence_rollback" });
  });
});
