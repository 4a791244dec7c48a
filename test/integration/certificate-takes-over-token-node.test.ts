/**
 * A certificate names its node: when a node id enrolled by a join token first is then presented
 * by a client certificate issued for it (the migration mode, `requireClientCert: false`), the
 * certificate takes the row over. Whoever enrolled it by token (a squatter holding any join
 * token) loses its node token, its join-token re-enrollment and the labels it brought; the
 * certificate's labels apply. Found by the security review of 2026-12-07 (finding 1): the
 * squatter's token still authenticated as the node, evicted the real node's stream, and the
 * certificate's labels were dropped.
 */
import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeService } from "../../proto/gen/agentcontrol/admin/v1/node_pb.js";
import { channelCredentials, tlsConfig, tlsPath } from "../fixtures/tls/index.js";
import { agentctl } from "../helpers/agentctl.js";
import { credentialsOf } from "../helpers/attack-certs.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const ENROLLMENT_KEY = "squatter-enrollment-key-0123456789";

describe("a certificate taking over a node id a join token enrolled first", {
  timeout: 60_000,
}, () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({
      config: { tls: tlsConfig({ mtls: true, requireClientCert: false }) },
    });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const issue = async (nodeId: string, labels: readonly string[]) => {
    const dir = await mkdtemp(join(tmpdir(), "tls-takeover-"));
    try {
      await copyFile(tlsPath("ca"), join(dir, "ca.pem"));
      await copyFile(tlsPath("ca", "key"), join(dir, "ca.key"));
      const result = await agentctl([
        "tls",
        "issue-node",
        nodeId,
        "--out",
        dir,
        ...labels.flatMap((l) => ["--label", l]),
      ]);
      expect(result.code, result.stderr).toBe(0);
      return {
        key: await readFile(join(dir, `${nodeId}.key`)),
        cert: await readFile(join(dir, `${nodeId}.pem`)),
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  it("clears the squatter's token and enrollment key and applies the certificate's labels", async () => {
    const nodeId = "web-17";
    const joinToken = await tc.joinToken();
    const squat = await connectAgent(
      tc.agentAddress,
      joinToken,
      nodeId,
      { enrollmentKey: ENROLLMENT_KEY },
      channelCredentials(),
    );
    expect(squat.welcome.body.case).toBe("welcome");
    const stolen = squat.welcome.body.case === "welcome" ? squat.welcome.body.value.nodeToken : "";
    squat.stream.close();
    await squat.stream.ended;

    const certificate = await issue(nodeId, ["pool=web", "canary=true"]);
    const real = await connectAgent(
      tc.agentAddress,
      undefined,
      nodeId,
      {},
      credentialsOf(certificate),
    );
    expect(real.welcome.body.case).toBe("welcome");
    const { node } = await tc.client(NodeService).getNode({ nodeId });
    expect(node?.assignedLabels).toEqual({ pool: "web", canary: "true" });
    expect(node?.pool).toBe("web");

    // The squatter's node token no longer authenticates; the real node's stream stays.
    await expect(
      connectAgent(tc.agentAddress, stolen, nodeId, {}, channelCredentials()),
    ).rejects.toThrow(/node token is not valid/);
    // Nor may it enroll the id again with the join token and its enrollment key.
    await expect(
      connectAgent(
        tc.agentAddress,
        joinToken,
        nodeId,
        { enrollmentKey: ENROLLMENT_KEY },
        channelCredentials(),
      ),
    ).rejects.toThrow(/already enrolled/);
    const stillOpen = await Promise.race([
      real.stream.ended.then(() => "ended"),
      new Promise((resolve) => setTimeout(() => resolve("open"), 1000)),
    ]);
    expect(stillOpen).toBe("open");
    real.stream.close();
    await real.stream.ended;
    const { rows } = await tc.control.db.pool.query<{
      token: boolean;
      key: boolean;
      join: boolean;
    }>(
      `select token_hash is not null as token, enrollment_key_hash is not null as key,
              join_token_id is not null as join from nodes where id = $1`,
      [nodeId],
    );
    expect(rows[0]).toEqual({ token: false, key: false, join: false });
  });
});
