/**
 * "Did you mean…?": the known names closest to a misspelt one, for errors that name what was given and
 * what would have been right (configuration options, command arguments, room options). One implementation
 * for the kernel and every module.
 */

/** Damerau-free Levenshtein distance; inputs are short option names. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]!;
      prev[j] = Math.min(above + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = above;
    }
  }
  return prev[b.length]!;
}

/** The closest candidates to `word`, best first; empty when nothing is close enough. */
export function closest(word: string, candidates: Iterable<string>, max = 3): string[] {
  const limit = Math.max(2, Math.floor(word.length / 3));
  const lower = word.toLowerCase();
  return [...new Set(candidates)]
    .map((c) => ({ c, d: editDistance(lower, c.toLowerCase()) - (c.startsWith(lower) || lower.startsWith(c) ? 1 : 0) }))
    .filter(({ d }) => d <= limit)
    .sort((x, y) => x.d - y.d || x.c.localeCompare(y.c))
    .slice(0, max)
    .map(({ c }) => c);
}

/** ": did you mean 'x'?" or "", naming only the closest candidates (two when equally close). */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const list = [...candidates];
  const best = closest(word, list, 2);
  if (!best.length) return '';
  const distance = (c: string) => editDistance(word.toLowerCase(), c.toLowerCase());
  const top = best.filter((c) => distance(c) === distance(best[0]!));
  return `: did you mean ${top.map((c) => `'${c}'`).join(' or ')}?`;
}
