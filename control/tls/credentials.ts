/**
 * grpc-js server credentials for the agent stream. `grpc.ServerCredentials.createSsl` can
 * only ask for client certificates and reject every peer without one; Control also
 * supports asking for them while still admitting token-authenticated agents
 * (`requireClientCert: false`, for a fleet moving to mTLS), so it builds its own.
 */
import * as grpc from "@grpc/grpc-js";
import type { AgentTlsConfig } from "./config.js";

/**
 * TLS credentials of the agent server. With a client CA, peers are asked for a client
 * certificate; with `requireClientCert` a peer without a certificate signed by that CA is
 * refused during the TLS handshake. A certificate that does not verify never names a node:
 * grpc-js reports a peer certificate only for an authorised TLS socket.
 */
export class AgentServerCredentials extends grpc.ServerCredentials {
  constructor(readonly tls: AgentTlsConfig) {
    super(
      {
        requestCert: tls.clientCa !== undefined,
        rejectUnauthorized: tls.clientCa !== undefined && tls.requireClientCert,
        minVersion: "TLSv1.2",
      },
      {
        cert: tls.cert,
        key: tls.key,
        ...(tls.clientCa !== undefined ? { ca: tls.clientCa } : {}),
      },
    );
  }

  override _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}

/** Credentials for the agent server: TLS as configured, or clear text when `tls` is unset. */
export function agentServerCredentials(tls: AgentTlsConfig | undefined): grpc.ServerCredentials {
  return tls ? new AgentServerCredentials(tls) : grpc.ServerCredentials.createInsecure();
}
