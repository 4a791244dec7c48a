/**
 * The PostgreSQL notification channels Control processes wake each other with, and how a list
 * of lines travels in them. A notification is only a hint: the rows it names are already
 * committed, and every reader also finds them on its next periodic read, so a lost
 * notification costs latency, never an operation or a fact.
 *
 * Every payload is a list of lines joined by `\n` (node ids, or `campaignId/nodeId`), packed so
 * that no payload reaches PostgreSQL's limit of 8000 bytes.
 */

/** Node ids with new unacknowledged operations (the leader, after a decision commits). */
export const OUTBOX_CHANNEL = "agent_control_outbox";

/**
 * Node ids whose registry row changed hands or liveness: a Hello written, a stream end
 * written, a sweep of a dead Control's nodes (written by the statement that changed them).
 */
export const NODES_CHANNEL = "agent_control_nodes";

/** `campaignId/nodeId` lines whose reports or config failures were just written. */
export const FACTS_CHANNEL = "agent_control_facts";

/** Campaign ids to decide now: started, or given a command, through a Control that does not lead. */
export const CAMPAIGNS_CHANNEL = "agent_control_campaigns";

/**
 * Node ids cut off (revoked or reset by an administrator): whichever Control holds the
 * node's stream closes it. Sent by the transaction that invalidated the node's credential.
 */
export const CUTOFF_CHANNEL = "agent_control_cutoff";

/** Every channel a Control listens on. */
export const CONTROL_CHANNELS: readonly string[] = [
  OUTBOX_CHANNEL,
  NODES_CHANNEL,
  FACTS_CHANNEL,
  CAMPAIGNS_CHANNEL,
  CUTOFF_CHANNEL,
];

/** The most bytes of one payload: under PostgreSQL's 8000 with room to spare. */
export const MAX_PAYLOAD_BYTES = 7900;

/**
 * Packs lines into as few payloads as fit {@link MAX_PAYLOAD_BYTES} each, in order.
 * @throws RangeError for a line that contains a newline or cannot fit a payload alone.
 */
export function packLines(lines: readonly string[], maxBytes = MAX_PAYLOAD_BYTES): string[] {
  const payloads: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line);
    if (line.includes("\n") || bytes > maxBytes) {
      throw new RangeError(`a notification line must be one line under ${maxBytes} bytes`);
    }
    const added = current.length === 0 ? bytes : bytes + 1;
    if (size + added > maxBytes) {
      payloads.push(current.join("\n"));
      current = [];
      size = 0;
    }
    size += current.length === 0 ? bytes : bytes + 1;
    current.push(line);
  }
  if (current.length > 0) payloads.push(current.join("\n"));
  return payloads;
}

/** The lines of one payload (empty payload: none). */
export function unpackLines(payload: string): string[] {
  return payload === "" ? [] : payload.split("\n");
}
