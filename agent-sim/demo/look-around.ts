/**
 * The `agentctl` commands the demo prints at its end for looking around, one per line as
 * an operator types them (`npx agentctl …`); the end-to-end test of printed commands runs
 * exactly these.
 */

/** What a line is for, printed after it as a shell comment (or nothing). */
export interface LookAroundLine {
  readonly command: string;
  readonly comment?: string;
}

/**
 * The demo's closing commands for its completed campaign `goodId` and rolled-back `badId`.
 * No `campaign retry`: in the demo the good campaign's skipped nodes lack upgrade.v1 or are
 * offline, so a retry had nothing to take and the printed command failed.
 */
export function lookAroundCommands(goodId: string, badId: string): LookAroundLine[] {
  return [
    { command: "npx agentctl node list" },
    { command: "npx agentctl campaign list" },
    { command: `npx agentctl campaign show ${goodId} -o wide` },
    { command: `npx agentctl campaign show ${badId}` },
    { command: "npx agentctl node list --pool legacy" },
    { command: "npx agentctl audit list" },
    {
      command: `npx agentctl campaign show ${badId} --state failed,rolled_back`,
      comment: "the nodes that failed the bad release, and the ones rolled back",
    },
  ];
}
