/**
 * The one line Control prints when it serves: where agents connect (the address the agent
 * listener is bound to, with the port it got) and the admin API's URL.
 */
import { formatAddress, type ListenAddress } from "./shared/listen-address.js";

/**
 * The serving line for an agent listener configured at `agentAddr` that got `agentPort` (they
 * differ when the configured port is 0) and an admin API at `adminUrl`.
 */
export function servingLine(agentAddr: ListenAddress, agentPort: number, adminUrl: string): string {
  const agents = formatAddress({ host: agentAddr.host, port: agentPort });
  return `Agent Control is serving agents on ${agents} and the admin API on ${adminUrl}`;
}
