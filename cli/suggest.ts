/**
 * "Did you mean …?" for a mistyped command or subcommand: the closest known name by edit
 * distance (insertions, deletions, substitutions and swaps of neighbours each cost one), or
 * a known name the word begins, when it is close enough to be a slip rather than another word.
 */

/** The optimal-string-alignment distance between `a` and `b` (a swap of neighbours costs 1). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    const row = d[i] ?? [];
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The known name `word` most likely stands for, or undefined when none is close: at most
 * one edit away for words of up to 4 letters, two for longer ones, or a name that starts
 * with a word of 3 letters or more (`camp` → `campaign`). Case is ignored; ties go to the
 * name listed first.
 */
export function closest(word: string, names: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  if (typed === "") return undefined;
  const limit = typed.length <= 4 ? 1 : 2;
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance =
      typed.length >= 3 && name.startsWith(typed) ? 0.5 : editDistance(typed, name.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}

/** ` Did you mean "x"?` for `word` among `names`, or "" when nothing is close. */
export function didYouMean(word: string, names: readonly string[]): string {
  const name = closest(word, names);
  return name === undefined ? "" : `; did you mean "${name}"?`;
}
