/**
 * The downloads listener at its own advertised concurrency: `downloads.maxConcurrent`
 * clients fetching a multi-MiB artifact at once all finish, byte-exact, and share the
 * listener fairly; more are refused (503) and wait their turn; a client that reads a response
 * late can still make its next request.
 */
import { execFile } from "node:child_process";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadPath } from "../../control/releases/downloads.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import type { ClientDownload } from "../helpers/download-clients-main.js";
import { keepAliveGets } from "../helpers/keep-alive-client.js";
import { storeLargeArtifact } from "../helpers/large-artifact.js";

const MIB = 1024 * 1024;
/** Eight 512 KiB chunks. */
const SIZE = 4 * MIB;
const SMALL = 64 * 1024;
/** An artifact no pair of loopback socket buffers holds whole: its reader can hold a slot. */
const HELD = 32 * MIB;
/** `downloads.maxConcurrent`, and the clients downloading at once. */
const CLIENTS = 64;
/** Downloads each client makes one after another: later ones start while others run. */
const ROUNDS = 2;
/** A download this many times slower than the median is starved. */
const STARVED = 8;
const CLIENTS_MAIN = fileURLToPath(new URL("../helpers/download-clients-main.ts", import.meta.url));
const execFileAsync = promisify(execFile);

describe("downloads at the listener's concurrency", { timeout: 300_000 }, () => {
  let tc: TestControl;
  let sha256: string;
  let smallSha256: string;
  const url = (version: string) =>
    `${tc.control.downloadsUrl}${downloadPath(version, "linux-amd64")}`;
  beforeAll(async () => {
    tc = await startTestControl({
      config: { downloads: { addr: "127.0.0.1:0", maxConcurrent: CLIENTS } },
    });
    sha256 = await storeLargeArtifact(tc, "7.1.0", SIZE, 71);
    smallSha256 = await storeLargeArtifact(tc, "7.2.0", SMALL, 72);
    await storeLargeArtifact(tc, "7.3.0", HELD, 73);
  }, 180_000);
  afterAll(async () => {
    await tc?.stop();
  });

  it("serves a steady stream of maxConcurrent downloads at once, every one whole and none starved", async () => {
    // The clients run in a process of their own, as a fleet's hosts do: what is measured
    // is Control's listener, not a test process busy receiving its own downloads.
    const downloads = await runClients(url("7.1.0"), SIZE, CLIENTS, ROUNDS);
    expect(downloads).toHaveLength(CLIENTS * ROUNDS);
    for (const d of downloads) {
      expect(d.failure).toBeUndefined();
      expect(d.bytes).toBe(SIZE);
      expect(d.sha256).toBe(sha256);
    }
    // Each download's rate from the Agent's call to its verified body (the Agent judges its
    // minimum rate the same way). With CLIENTS at once, every one should get about a
    // CLIENTS-th of the listener; the slowest may be behind, never starved.
    const rates = downloads.map((d) => (d.bytes * 1000) / d.ms).sort((x, y) => x - y);
    const slowest = rates[0] ?? 0;
    const median = rates[Math.floor(rates.length / 2)] ?? 0;
    console.info(
      `downloads: ${downloads.length} × ${SIZE / MIB} MiB, ${CLIENTS} at once: KiB/s slowest ${kib(slowest)}, median ${kib(median)}, fastest ${kib(rates.at(-1) ?? 0)}`,
    );
    expect(slowest).toBeGreaterThanOrEqual(median / STARVED);
  });

  it("refuses downloads beyond maxConcurrent with 503, which the Agent waits out: every one completes", async () => {
    const before = await downloadAnswers(tc, "503");
    // Every slot held: maxConcurrent GETs of an artifact larger than the sockets' buffers,
    // whose readers stop after the first bytes, so Control waits on each for its reader.
    const { hostname, port } = new URL(tc.control.downloadsUrl ?? "");
    const holders = await holdSlots(hostname, Number(port), downloadPath("7.3.0", "linux-amd64"));
    let downloads: Promise<ClientDownload[]> | undefined;
    try {
      downloads = runClients(url("7.1.0"), SIZE, 16, 1);
      // Nothing queued inside Control: the excess is refused before any database work.
      for (let waited = 0; (await downloadAnswers(tc, "503")) <= before; waited += 100) {
        if (waited > 60_000) throw new Error("no download was refused with every slot held");
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      for (const h of holders) h.destroy();
    }
    for (const d of await downloads) {
      expect(d.failure).toBeUndefined();
      expect(d.sha256).toBe(sha256);
    }
  });

  it("answers the next request of a client that read its previous response late", async () => {
    const { hostname, port } = new URL(tc.control.downloadsUrl ?? "");
    // The response fits the sockets' buffers: Control has written all of it long before
    // the client reads it, 7 s later, and asks for the next at once.
    const answers = await keepAliveGets(
      hostname,
      Number(port),
      downloadPath("7.2.0", "linux-amd64"),
      [7000, 0],
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.bytes).toBe(SMALL);
      expect(answer.sha256).toBe(smallSha256);
    }
  });
});

/** Runs {@link ClientDownload} loops in a child process; their outcomes. */
async function runClients(
  url: string,
  size: number,
  clients: number,
  rounds: number,
): Promise<ClientDownload[]> {
  const { stdout } = await execFileAsync(
    process.execPath,
    ["--import", "tsx", CLIENTS_MAIN, url, String(size), String(clients), String(rounds)],
    { maxBuffer: 16 * MIB },
  );
  return JSON.parse(stdout) as ClientDownload[];
}

function kib(bytesPerSecond: number): number {
  return Math.round(bytesPerSecond / 1024);
}

/**
 * Opens {@link CLIENTS} GETs of `path`, each read up to its first bytes (its 200 status line)
 * and then not at all: each holds one of the listener's slots until destroyed.
 */
async function holdSlots(host: string, port: number, path: string): Promise<Socket[]> {
  const open = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect(port, host, () => {
        socket.write(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
      });
      socket.once("error", reject);
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        const status = chunk.toString("latin1").split("\r\n")[0] ?? "";
        if (status.startsWith("HTTP/1.1 200")) resolve(socket);
        else reject(new Error(`a slot holder was answered ${status}`));
      });
    });
  return Promise.all(Array.from({ length: CLIENTS }, open));
}

/** Control's `agent_control_downloads_total{status}`. */
async function downloadAnswers(tc: TestControl, status: string): Promise<number> {
  const text = await (await fetch(`${tc.adminUrl}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`agent_control_downloads_total{status="${status}"}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}
