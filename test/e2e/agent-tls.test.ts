/**
 * The agent stream over TLS: a real Agent enrolls by its client certificate alone (mTLS,
 * no join token; Control names the node from the certificate), and simulated agents reach
 * the same Control over TLS with a join token, each trusting Control's CA given by `--ca`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleAgent } from "../../agent/bundle.js";
import { readStreamTls } from "../../agent/core/tls.js";
import { type Fleet, startFleet } from "../../agent-sim/index.js";
import { NODE_A, tlsConfig, tlsPath } from "../fixtures/tls/index.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { makeKeys } from "../helpers/releases.js";
import { waitOnline } from "./agent-campaign-fixture.js";
import {
  agentStatus,
  eventually,
  type RunningAgent,
  type StatusJson,
  startAgent,
} from "./agent-fixture.js";

describe("the Agent and the simulator over TLS", () => {
  let tc: TestControl;
  let dir = "";
  let pin = "";
  let agent: RunningAgent | undefined;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    const [key] = await makeKeys(1);
    pin = key?.pin ?? "";
    dir = await mkdtemp(join(tmpdir(), "real-agent-tls-"));
    await writeFile(
      join(dir, "agent.mjs"),
      await bundleAgent({ version: "1.0.0", platform: "linux-amd64" }),
    );
    tc = await startTestControl({
      config: {
        release: { pins: [pin] },
        tls: tlsConfig({ mtls: true, requireClientCert: false }),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await agent?.stop();
    await fleet?.stop();
    await tc?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a real Agent with a client certificate is admitted without a join token", async () => {
    const install = join(dir, "install");
    agent = startAgent(join(dir, "agent.mjs"), install, [
      "--server",
      tc.agentAddress,
      "--pins",
      pin,
      "--node-id",
      NODE_A,
      "--ca",
      tlsPath("ca"),
      "--cert",
      tlsPath("node-a"),
      "--key",
      tlsPath("node-a", "key"),
    ]);
    const node = await waitOnline(tc, NODE_A);
    expect(node.agentVersion).toBe("1.0.0");
    const status = await agentStatus(join(dir, "agent.mjs"), install);
    expect(status).toMatchObject({ current: "1.0.0", nodeId: NODE_A });
    // Welcomed by its certificate, without a node token, it says it is enrolled (issue 38).
    const enrolled = await eventually(
      async () => {
        const s = (await agentStatus(join(dir, "agent.mjs"), install)) as StatusJson & {
          enrolled?: boolean;
        };
        return s.enrolled === true ? s : undefined;
      },
      "agent status says enrolled",
      10_000,
    );
    expect(enrolled).toMatchObject({ enrolled: true, enrolledBy: "certificate" });
  }, 60_000);

  it("simulated agents reach Control over TLS with --ca and a join token", async () => {
    fleet = await startFleet({
      server: tc.agentAddress,
      count: 3,
      idPrefix: "tls-sim",
      joinToken: await tc.joinToken(),
      tls: readStreamTls({ ca: tlsPath("ca") }) ?? {},
    });
    await fleet.waitUntil((f) => f.welcomedCount() >= 3, 30_000, "3 agents welcomed over TLS");
    expect(fleet.agents.every((a) => a.hasNodeToken)).toBe(true);
  }, 60_000);

  it("a simulated agent without the CA is not admitted", async () => {
    const untrusting = await startFleet({
      server: tc.agentAddress,
      count: 1,
      idPrefix: "no-ca",
      joinToken: await tc.joinToken(),
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(untrusting.welcomedCount()).toBe(0);
    } finally {
      await untrusting.stop();
    }
  }, 30_000);
});
