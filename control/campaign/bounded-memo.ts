/**
 * A bounded memo for a pure function of small arguments. The engine asks the same question of
 * its windows again and again (each decision, each batch's closed time walks the same edges
 * from the batch's start), and the answer depends on the arguments alone.
 */

/**
 * Wraps `compute`, a function of two arguments, so that a call whose `key` was seen returns the remembered result. At most
 * `capacity` results are held: the memo starts empty again when it is full. `compute` must be
 * pure (its result a function of its arguments alone, never mutated by callers), and `key`
 * must give equal strings exactly for arguments on which `compute` gives equal results.
 */
export function boundedMemo<A, B, Result>(
  compute: (a: A, b: B) => Result,
  key: (a: A, b: B) => string,
  capacity: number,
): (a: A, b: B) => Result {
  const remembered = new Map<string, Result>();
  return (a: A, b: B): Result => {
    const k = key(a, b);
    if (remembered.has(k)) return remembered.get(k) as Result;
    const result = compute(a, b);
    if (remembered.size >= capacity) remembered.clear();
    remembered.set(k, result);
    return result;
  };
}
