/**
 * Whether an `http://` admin URL points at a port that speaks TLS: a TLS handshake is tried
 * with it, and a server's certificate in reply is the answer. Nothing is sent after the
 * handshake (no token, no request), so the certificate need not be trusted to ask.
 */
import { isIP } from "node:net";
import { connect } from "node:tls";

/** How long the probe waits for a handshake to complete. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * True when a TLS handshake with the host and port of `server` (an `http://` URL) completes
 * within `timeoutMs`; false on any failure, refusal or silence.
 */
export function speaksTls(server: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  const url = new URL(server);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port: Number(url.port || 80),
      // Only the handshake's success is read: nothing is sent that trust would protect.
      rejectUnauthorized: false,
      ...(isIP(host) === 0 ? { servername: host } : {}),
    });
    const done = (result: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once("secureConnect", () => done(true));
    socket.once("error", () => done(false));
  });
}
