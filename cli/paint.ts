/**
 * ANSI colour for agentctl's terminal output, apart from the protobuf formatters of
 * output.ts so that starting agentctl (help, usage errors) does not load the protobuf runtime.
 */
import { terminalSequence } from "./printable.js";

/** Colour names {@link Painter} knows. */
export type Colour = "red" | "green" | "yellow" | "cyan" | "dim" | "bold";

const CODES: Record<Colour, string> = {
  red: "31",
  green: "32",
  yellow: "33",
  cyan: "36",
  dim: "2",
  bold: "1",
};

/** Wraps text in ANSI colour when enabled, and returns it unchanged otherwise. */
export type Painter = (colour: Colour, text: string) => string;

/** A {@link Painter} that colours only when `enabled` (a TTY without `NO_COLOR`). */
export function createPainter(enabled: boolean): Painter {
  return (colour, text) =>
    enabled ? `${terminalSequence(`[${CODES[colour]}m`)}${text}${terminalSequence("[0m")}` : text;
}
