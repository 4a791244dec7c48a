/**
 * What a node id may be. One rule for every place a node id enters Control: the Hello an
 * Agent sends (control/agents/validate.ts) and the client certificate it presents
 * (control/tls/node-identity.ts).
 */

/** The longest node id, in characters. */
export const NODE_ID_MAX_LENGTH = 128;

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** True for a string usable as a node id: letters, digits, '.', '_', ':' or '-', not empty. */
export function isNodeId(id: string): boolean {
  return id.length > 0 && id.length <= NODE_ID_MAX_LENGTH && NODE_ID.test(id);
}
