/**
 * A process of download clients, as a fleet's hosts are to Control: `clients` loops, each
 * fetching `url` `rounds` times one after another with the Agent's own `fetchArtifact` (its
 * default policy: stall timeout, minimum rate, 503 retries). Prints one JSON line: every
 * download's outcome, its milliseconds from the call to the verified body, and its sha256.
 *
 * `node --import tsx test/helpers/download-clients-main.ts URL SIZE CLIENTS ROUNDS`
 */
import { DEFAULT_DOWNLOAD_POLICY, fetchArtifact } from "../../agent/core/download.js";

/** One download as the child reports it. */
export interface ClientDownload {
  readonly ok: boolean;
  /** The failure's code and message when not ok. */
  readonly failure?: string;
  readonly ms: number;
  readonly bytes: number;
  readonly sha256: string;
}

async function main(): Promise<void> {
  const [url = "", size = "0", clients = "1", rounds = "1"] = process.argv.slice(2);
  const signal = new AbortController().signal;
  const downloads: ClientDownload[] = [];
  await Promise.all(
    Array.from({ length: Number(clients) }, async () => {
      for (let r = 0; r < Number(rounds); r++) {
        const started = performance.now();
        const result = await fetchArtifact(url, Number(size), DEFAULT_DOWNLOAD_POLICY, signal);
        const ms = performance.now() - started;
        downloads.push(
          result.ok
            ? {
                ok: true,
                ms,
                bytes: result.artifact.bytes.byteLength,
                sha256: result.artifact.sha256,
              }
            : { ok: false, failure: `${result.code}: ${result.message}`, ms, bytes: 0, sha256: "" },
        );
      }
    }),
  );
  process.stdout.write(`${JSON.stringify(downloads)}\n`);
}

await main();
