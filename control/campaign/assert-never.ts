/**
 * Exhaustiveness guard for `switch` statements over tagged unions.
 *
 * @param value - the value the type checker proved impossible
 * @param what - a word naming the union, for the error message
 * @throws always: reaching it at run time means a value outside the union slipped through
 */
export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
