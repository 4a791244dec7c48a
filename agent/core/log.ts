/**
 * The smallest logger the protocol core and the Agent write to: structured fields first,
 * then a message. pino's loggers fit it, so the simulator passes its own.
 */
export interface AgentLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}
