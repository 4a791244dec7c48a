/**
 * `mirror-main.ts ROOT PORT`: the Node.js static mirror of the downloads benchmark as a
 * process, serving every file directly under ROOT at `/<name>` until SIGTERM.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { startStaticMirror } from "./static-mirror.js";

const [root = ".", port = "0"] = process.argv.slice(2);
const files = new Map<string, Uint8Array>();
for (const name of await readdir(root)) files.set(`/${name}`, await readFile(join(root, name)));
const mirror = await startStaticMirror(files, Number(port));
process.once("SIGTERM", () => {
  void mirror.close().then(() => process.exit(0));
});
