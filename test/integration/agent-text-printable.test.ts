/**
 * Text an Agent chose (its labels and pool) reaches the operator's terminal
 * only as text: a real Control and PostgreSQL, a raw Agent stream on loopback whose Hello
 * carries terminal escape sequences, and the real `agentctl` binary reading it back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentctl } from "../helpers/agentctl.js";
import { startTestControl, type TestControl } from "../helpers/control.js";
import { connectAgent } from "../helpers/raw-agent.js";

const ESC = "\u001b";
/** Sets the window title, clears the screen, writes the clipboard; a C1 CSI; a forged row. */
const HOSTILE = `${ESC}]0;pwned\u0007${ESC}[2J${ESC}]52;c;Zm9v\u0007\u009b1A\nforged-row`;
const SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b]52;c;Zm9v\\x07\\x9b1A\\nforged-row";
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must never reach the terminal
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("text an Agent sends, as agentctl prints it", () => {
  let tc: TestControl;
  beforeAll(async () => {
    tc = await startTestControl({});
  });
  afterAll(async () => {
    await tc?.stop();
  });

  const cli = (args: string[]) =>
    agentctl(args, { AGENTCTL_SERVER: tc.adminUrl, AGENTCTL_TOKEN: tc.operatorToken });

  it("shows control characters as escapes in node list and show, and keeps them exact in JSON", async () => {
    const join = await tc.joinToken();
    const { stream } = await connectAgent(tc.agentAddress, join, "hostile-1", {
      labels: { site: HOSTILE, pool: `p${ESC}[5m` },
    });
    const list = await cli(["node", "list", "-o", "wide"]);
    const show = await cli(["node", "show", "hostile-1"]);
    const json = await cli(["node", "show", "hostile-1", "--json"]);
    stream.close();
    for (const r of [list, show]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(RAW_CONTROL);
      expect(r.stdout).not.toMatch(/^forged-row/m);
    }
    expect(list.stdout).toContain(`site=${SHOWN}`);
    expect(show.stdout).toMatch(/^Pool:\s+p\\x1b\[5m$/m);
    expect(show.stdout).toContain(`site=${SHOWN}`);
    // Exact values, with DEL and C1 escaped as JSON escapes: nothing raw reaches the terminal.
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    const node = JSON.parse(json.stdout) as {
      node: { labels: Record<string, string>; pool: string };
    };
    expect(node.node.labels.site).toBe(HOSTILE);
    expect(node.node.pool).toBe(`p${ESC}[5m`);
  });
});
