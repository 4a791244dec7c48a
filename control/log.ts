/**
 * Structured logging with pino. Child loggers carry `nodeId`, `campaignId`, `batch`.
 * Secrets never reach a log line: the redaction paths below cover every field that can
 * hold a token, and callers never interpolate secrets into messages.
 */
import { pino } from "pino";

/** The logger type used across Control. */
export type Logger = pino.Logger;

/** Paths pino replaces with "[redacted]" wherever they appear. */
export const REDACTED_PATHS = [
  "token",
  "secret",
  "nodeToken",
  "joinToken",
  "adminToken",
  "authorization",
  "*.token",
  "*.secret",
  "*.nodeToken",
  "*.joinToken",
  "*.adminToken",
  "*.authorization",
  "headers.authorization",
  "databaseUrl",
  "*.databaseUrl",
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  readonly level?: string;
  /** Where lines go (default stdout). */
  readonly destination?: pino.DestinationStream;
  readonly name?: string;
}

/** Creates the root logger. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? "info",
      name: options.name ?? "control",
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      base: { pid: process.pid },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
