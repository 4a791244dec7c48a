/**
 * The admin API's error funnel: a call that fails as `internal` is always logged with its
 * cause and method, whatever shape the failure had; refusals the client is told about in
 * full (Control's own errors, Connect's own refusals) are not logged as faults.
 */
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { errorFunnel } from "../../../control/admin/error-funnel.js";
import { ControlError } from "../../../control/errors.js";
import { createLogger } from "../../../control/log.js";
import {
  CampaignService,
  StartCampaignRequestSchema,
} from "../../../proto/gen/agentcontrol/admin/v1/campaign_pb.js";

/** A logger whose JSON lines land in `lines`. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { lines, log: createLogger({ level: "info", destination }) };
}

const method = CampaignService.method.startCampaign;

function request(): UnaryRequest {
  return {
    stream: false,
    service: CampaignService,
    method,
    requestMethod: "POST",
    url: "http://127.0.0.1/agentcontrol.admin.v1.CampaignService/StartCampaign",
    header: new Headers(),
    contextValues: createContextValues(),
    signal: new AbortController().signal,
    message: create(StartCampaignRequestSchema),
  } as unknown as UnaryRequest;
}

/** Runs the funnel around a call that throws `error`; resolves to what the client got. */
async function failWith(error: unknown) {
  const { lines, log } = capture();
  const call = errorFunnel(log)(async () => {
    throw error;
  });
  const thrown = await call(request()).then(
    () => undefined,
    (e: unknown) => e,
  );
  await new Promise((resolve) => setImmediate(resolve));
  return { thrown: thrown as ConnectError, lines };
}

describe("the admin API's error funnel", () => {
  it("logs a fault of Control's own code with its cause and method, and sends no detail", async () => {
    const { thrown, lines } = await failWith(new Error("deadlock detected"));
    expect(thrown.code).toBe(Code.Internal);
    expect(thrown.rawMessage).not.toContain("deadlock");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      method: "StartCampaign",
      msg: "admin call failed",
    });
    expect(JSON.stringify(lines[0]?.err)).toContain("deadlock detected");
  });

  it("logs a ConnectError that reaches the client as internal (a fault of a library)", async () => {
    const cause = new Error("socket hang up");
    const { thrown, lines } = await failWith(
      new ConnectError("boom", Code.Internal, {}, [], cause),
    );
    expect(thrown.code).toBe(Code.Internal);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: "StartCampaign", msg: "admin call failed" });
    expect(JSON.stringify(lines[0])).toContain("socket hang up");
  });

  it("logs a ControlError whose code is internal", async () => {
    const { thrown, lines } = await failWith(
      new ControlError("internal", "store invariant broken"),
    );
    expect(thrown.code).toBe(Code.Internal);
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines[0])).toContain("store invariant broken");
  });

  it("logs a ConnectError of code unknown, which a client sees as a fault too", async () => {
    const { lines } = await failWith(new ConnectError("?", Code.Unknown));
    expect(lines).toHaveLength(1);
  });

  it.each([
    new ControlError("node_busy", "2 node(s) already in an active campaign (c1)"),
    new ConnectError("unknown admin token", Code.Unauthenticated),
    new ConnectError("too large", Code.ResourceExhausted),
  ])("does not log a refusal the client is told about in full: %s", async (error) => {
    const { thrown, lines } = await failWith(error);
    expect(thrown.code).not.toBe(Code.Internal);
    expect(lines).toEqual([]);
  });

  it("logs a fault that ends a server stream midway, with its method", async () => {
    const { lines, log } = capture();
    const call = errorFunnel(log)(async (req) => {
      async function* messages() {
        yield create(StartCampaignRequestSchema);
        throw new Error("pool destroyed");
      }
      return {
        stream: true,
        service: req.service,
        method: req.method,
        header: new Headers(),
        trailer: new Headers(),
        message: messages(),
      } as unknown as StreamResponse;
    });
    const response = (await call(request())) as unknown as StreamResponse;
    const seen: unknown[] = [];
    const thrown = await (async () => {
      for await (const m of response.message) seen.push(m);
    })().then(
      () => undefined,
      (e: unknown) => e as ConnectError,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toHaveLength(1);
    expect(thrown?.code).toBe(Code.Internal);
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines[0])).toContain("pool destroyed");
  });

  it("passes an answer through untouched", async () => {
    const { lines, log } = capture();
    const answer = { stream: false } as unknown as UnaryResponse;
    const call = errorFunnel(log)(async () => answer);
    expect(await call(request())).toBe(answer);
    expect(lines).toEqual([]);
  });
});
