/**
 * Text an Agent reports that Control shows on an operator's terminal (`agentctl node show`)
 * or dashboard. A hostile Agent, or a hostile server whose bytes an honest Agent quotes in a
 * refusal, could otherwise put terminal escape sequences there: clear the screen, set the
 * window title, or move the cursor back and overwrite what the operator reads.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters removed
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` with each C0 control character (tab and newline included), DEL and each C1 control
 * character replaced by U+FFFD, so that it prints as one line of plain text.
 */
export function printableText(text: string): string {
  return text.replace(CONTROL_CHARACTERS, "\uFFFD");
}
