/**
 * TLS by default: join and node tokens travel as bearer metadata, so a listener off the
 * loopback interface in clear text hands them (and every operation) to anyone on the path.
 * Control refuses to start so unless the operator says `allowInsecure` (it then warns at
 * start). The default agent address is loopback until agent TLS is configured
 * (docs/decisions.md, "TLS by default").
 */
import type { ListenAddress } from "./shared/listen-address.js";
import { formatAddress } from "./shared/listen-address.js";

/** The default agent listener: every interface with agent TLS, loopback without. */
export function defaultAgentAddr(agentTls: boolean): string {
  return agentTls ? "0.0.0.0:7443" : "127.0.0.1:7443";
}

/** True for a loopback host: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A listener as the check sees it: its setting's name, address, and whether it has TLS. */
export interface ListenerFacts {
  readonly name: string;
  readonly tlsSetting: string;
  readonly addr: ListenAddress;
  readonly tls: boolean;
}

/** The clear-text listeners off loopback, in the order given. */
export function clearTextExposed(listeners: readonly ListenerFacts[]): ListenerFacts[] {
  return listeners.filter((l) => !l.tls && !isLoopbackHost(l.addr.host));
}

/**
 * The one problem line for clear-text listeners off loopback without `allowInsecure`, or
 * undefined when there are none.
 */
export function clearTextProblem(exposed: readonly ListenerFacts[]): string | undefined {
  if (exposed.length === 0) return undefined;
  const where = exposed.map((l) => `${l.name} ${formatAddress(l.addr)}`).join(", ");
  const settings = exposed.map((l) => l.tlsSetting).join(", ");
  return `${where}: clear text on a non-loopback address; configure TLS (${settings}; agentctl tls init writes the files) or set allowInsecure / AGENT_CONTROL_ALLOW_INSECURE=true`;
}
