import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../cli/args.js";
import { type Connection, resolveConnection } from "../../../cli/client.js";
import { describeError } from "../../../cli/errors.js";
import { toConnectError } from "../../../control/errors.js";
import { ErrorInfoSchema } from "../../../proto/gen/google/rpc/error_details_pb.js";

/** A google.rpc.ErrorInfo detail as Control attaches it. */
const info = (reason: string, metadata: Record<string, string>) => ({
  desc: ErrorInfoSchema,
  value: { reason, domain: "agentcontrol", metadata },
});

describe("resolveConnection", () => {
  const readToken = (path: string): string | undefined =>
    path === "/srv/data/admin-token" || path === ".data/admin-token" ? "file-token" : undefined;

  it("defaults to the local admin API and the token file in .data", () => {
    expect(resolveConnection({ env: {}, readToken })).toMatchObject({
      server: "http://127.0.0.1:7080",
      dataDir: ".data",
      token: "file-token",
      tokenSource: "file",
    });
  });

  it("prefers --token over AGENTCTL_TOKEN over the file", () => {
    const env = { AGENTCTL_TOKEN: "env-token" };
    expect(resolveConnection({ env, readToken, token: "flag-token" }).token).toBe("flag-token");
    expect(resolveConnection({ env, readToken }).tokenSource).toBe("env");
  });

  it("reads the token file of --data-dir or AGENT_CONTROL_DATA_DIR", () => {
    const env = { AGENT_CONTROL_DATA_DIR: "/srv/data" };
    expect(resolveConnection({ env, readToken }).token).toBe("file-token");
    expect(resolveConnection({ env, readToken, dataDir: "/elsewhere" }).tokenSource).toBe("none");
  });

  it.each(["http://localhost:7080", "http://[::1]:7080", "127.0.0.1:9000"])(
    "uses the token file for the local server %s",
    (server) => {
      expect(resolveConnection({ env: {}, readToken, server }).tokenSource).toBe("file");
    },
  );

  it("never sends the local token file to another host", () => {
    const c = resolveConnection({
      env: { AGENTCTL_SERVER: "https://control.example:7080" },
      readToken,
    });
    expect(c).toMatchObject({
      server: "https://control.example:7080",
      token: undefined,
      tokenSource: "none",
    });
  });

  it("refuses a local token file whose token no header can carry, naming the file", () => {
    expect(() =>
      resolveConnection({ env: {}, dataDir: "/srv/data", readToken: () => "two\nlines" }),
    ).toThrow(
      new UsageError(
        "the token in /srv/data/admin-token must be printable ASCII without spaces or newlines",
      ),
    );
  });

  it("refuses to send a token over http:// to a server off loopback, unless insecure", () => {
    for (const server of ["http://10.0.0.5:7080", "http://control.example:7080"]) {
      expect(() => resolveConnection({ env: {}, server, token: "flag-token" })).toThrow(
        /^refusing to send the token in clear text to http:\/\/[^ ]+, which is not on loopback: use https:\/\/.*--insecure/,
      );
      expect(() => resolveConnection({ env: { AGENTCTL_TOKEN: "t" }, server })).toThrow(UsageError);
      expect(
        resolveConnection({ env: {}, server, token: "flag-token", insecure: true }).token,
      ).toBe("flag-token");
      expect(resolveConnection({ env: {}, server }).tokenSource).toBe("none");
    }
    const tls = { env: {}, server: "https://10.0.0.5:7080", token: "flag-token" };
    expect(resolveConnection(tls).token).toBe("flag-token");
    for (const server of ["http://127.0.0.2:7080", "http://[::1]:7080", "http://localhost:1"]) {
      expect(resolveConnection({ env: {}, server, token: "flag-token" }).token).toBe("flag-token");
    }
  });

  it("refuses a server that is not an http(s) URL", () => {
    expect(() => resolveConnection({ env: {}, server: "ftp://x" })).toThrow(
      new UsageError('invalid --server "ftp://x": use http:// or https://'),
    );
  });
});

describe("describeError", () => {
  const connection: Connection = {
    server: "http://127.0.0.1:7080",
    dataDir: "/srv/data",
    token: undefined,
    tokenSource: "none",
  };

  it.each([
    [
      new ConnectError("no token", Code.Unauthenticated),
      "not authenticated: pass --token or set AGENTCTL_TOKEN (the operator token is in /srv/data/admin-token)",
    ],
    [
      new ConnectError("viewer", Code.PermissionDenied),
      "permission denied: this token's role cannot disable nodes (viewer)",
    ],
    [
      new ConnectError("connect ECONNREFUSED 127.0.0.1:7080", Code.Unavailable),
      "cannot reach Control at http://127.0.0.1:7080: connect ECONNREFUSED 127.0.0.1:7080",
    ],
    [new ConnectError("node n1 not found", Code.NotFound), "node n1 not found"],
    [
      new ConnectError("nodes n1, n2 are in campaign c1", Code.AlreadyExists),
      "nodes n1, n2 are in campaign c1",
    ],
    [
      new ConnectError(
        "2 node(s) already in an active campaign (c1)",
        Code.FailedPrecondition,
        {},
        [info("NODE_BUSY", { nodeIds: "n1,n2", campaignIds: "c1", nodeCount: "2" })],
      ),
      "2 node(s) already in an active campaign (c1) [NODE_BUSY campaignIds=c1 nodeCount=2 nodeIds=n1,n2]",
    ],
    [
      new ConnectError("page_size must not be negative", Code.InvalidArgument, {}, [
        info("INVALID_ARGUMENT", { field: "page_size" }),
      ]),
      "page_size must not be negative [field=page_size]",
    ],
    [
      new ConnectError("node n1 not found", Code.NotFound, {}, [info("NOT_FOUND", {})]),
      "node n1 not found",
    ],
    [new ConnectError("boom", Code.Internal), "DisableNode failed: boom"],
    [new UsageError("unknown flag --x"), "unknown flag --x"],
    [new Error("first\nsecond"), "first; second"],
  ])("maps %s to one actionable line", (error, line) => {
    expect(describeError(error, { connection, method: "DisableNode" })).toBe(line);
  });

  it("names the request that failed with Control's internal error, and where its cause is", () => {
    // What Control's error funnel makes of any fault that is not one of its own errors.
    const internal = toConnectError(new Error("connection terminated unexpectedly"));
    expect(describeError(internal, { connection, method: "StartCampaign" })).toBe(
      "StartCampaign failed: internal error (see Control's log)",
    );
    expect(describeError(internal, { connection })).toBe(
      "Control failed: internal error (see Control's log)",
    );
  });

  it("names the admin-token file only where agentctl knows Control keeps it", () => {
    const unauthenticated = new ConnectError("no token", Code.Unauthenticated);
    const line = (inputs: Parameters<typeof resolveConnection>[0]) =>
      describeError(unauthenticated, { connection: resolveConnection(inputs) });
    const readToken = () => undefined;
    // Told where: by flag or environment, or noted by a Control running here on that port.
    expect(line({ env: { AGENT_CONTROL_DATA_DIR: "/srv/data" }, readToken })).toContain(
      "(the operator token is in /srv/data/admin-token)",
    );
    expect(line({ env: {}, readToken, findDataDir: () => ".data/demo" })).toContain(
      `(the operator token is in ${join(".data", "demo", "admin-token")})`,
    );
    // A local port that no Control here noted: no guessed path.
    const unnoted = line({ env: {}, readToken, findDataDir: () => undefined });
    expect(unnoted).not.toContain(".data/admin-token");
    expect(unnoted).toBe(
      "not authenticated: pass --token or set AGENTCTL_TOKEN (no Control started here noted http://127.0.0.1:7080: the operator token is in admin-token in its data directory, AGENT_CONTROL_DATA_DIR where it runs; pass --data-dir DIR)",
    );
    // Another host: its file is on that host.
    expect(line({ env: { AGENTCTL_SERVER: "https://control.example:7080" }, readToken })).toBe(
      "not authenticated: pass --token or set AGENTCTL_TOKEN (the operator token is in admin-token in the data directory of Control at https://control.example:7080, on its host)",
    );
  });

  it("says which token was rejected", () => {
    const withEnv: Connection = { ...connection, token: "t", tokenSource: "env" };
    expect(
      describeError(new ConnectError("bad", Code.Unauthenticated), { connection: withEnv }),
    ).toBe(
      "not authenticated: the token in AGENTCTL_TOKEN was rejected (bad); pass --token or set AGENTCTL_TOKEN (the operator token is in /srv/data/admin-token)",
    );
  });

  it("names only the rejected token and its reason when the user gave it and no data directory is known", () => {
    const given: Connection = {
      ...connection,
      token: "t",
      tokenSource: "flag",
      dataDirSource: "guess",
    };
    expect(
      describeError(
        new ConnectError(
          "token expired at 2026-12-07T16:10:00.000Z: ask for a new admin token",
          Code.Unauthenticated,
        ),
        { connection: given },
      ),
    ).toBe(
      "not authenticated: the token given with --token was rejected (token expired at 2026-12-07T16:10:00.000Z: ask for a new admin token); pass a valid token with --token or AGENTCTL_TOKEN",
    );
  });

  it("treats a refused connection hidden in the cause chain as unreachable", () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED ::1:7080"), {
      code: "ECONNREFUSED",
    });
    const error = new ConnectError("", Code.Internal, undefined, undefined, cause);
    expect(describeError(error, { connection })).toBe(
      "cannot reach Control at http://127.0.0.1:7080: ECONNREFUSED",
    );
  });

  it("names the file of a file-system error", () => {
    const error = Object.assign(new Error("ENOENT: open"), { code: "ENOENT", path: "/x/key" });
    expect(describeError(error)).toBe("no such file or directory: /x/key");
  });
});
