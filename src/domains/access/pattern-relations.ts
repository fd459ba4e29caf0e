/**
 * How two topic globs (`*` any run of characters, `?` exactly one, everything else literal)
 * relate as sets of names: whether one holds every name of the other, whether they share one.
 * What a check needs when a request names a pattern of topics rather than a topic (a sink's
 * `topics.regex`, the names a MirrorMaker source writes): is every topic it can reach in scope,
 * and can it reach an internal one. Pure, and polynomial in the patterns' lengths.
 */

const collapse = (glob: string) => glob.replace(/\*{2,}/g, "*");

/**
 * Whether every name `inner` matches is matched by `outer`. Decided by matching `outer`
 * against `inner` read as text whose `*` and `?` are symbols: `outer`'s `*` takes any run of
 * them, its `?` one literal or one `?`, its literal only the same literal. Sound (a yes is
 * always right); a no may be too strict for contrived pairs, which only refuses more.
 */
export function globCovers(outer: string, inner: string): boolean {
  const p = collapse(outer);
  const t = collapse(inner);
  let i = 0;
  let j = 0;
  let star = -1;
  let mark = 0;
  const one = (pc: string | undefined, tc: string) => pc !== undefined && pc !== "*" && (pc === "?" ? tc !== "*" : pc === tc);
  while (j < t.length) {
    if (one(p[i], t[j]!)) {
      i++;
      j++;
    } else if (p[i] === "*") {
      star = i++;
      mark = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++mark;
    } else return false;
  }
  while (p[i] === "*") i++;
  return i === p.length;
}

/**
 * Whether some name matches both globs: a walk over pairs of positions, each glob's `*` either
 * ending or taking the character the other side reads. Exact.
 */
export function globsMeet(left: string, right: string): boolean {
  const a = collapse(left);
  const b = collapse(right);
  const width = b.length + 1;
  const seen = new Uint8Array((a.length + 1) * width);
  const todo: [number, number][] = [[0, 0]];
  const push = (i: number, j: number) => {
    if (seen[i * width + j]) return;
    seen[i * width + j] = 1;
    todo.push([i, j]);
  };
  seen[0] = 1;
  while (todo.length) {
    const [i, j] = todo.pop()!;
    if (i === a.length && j === b.length) return true;
    const ca = a[i];
    const cb = b[j];
    // A star ends without taking anything.
    if (ca === "*") push(i + 1, j);
    if (cb === "*") push(i, j + 1);
    if (ca === undefined || cb === undefined) continue;
    // Both read one character: a star stays where it is, anything else moves on.
    if (ca !== "*" && cb !== "*" && ca !== "?" && cb !== "?" && ca !== cb) continue;
    if (ca === "*" && cb === "*") continue;
    push(ca === "*" ? i : i + 1, cb === "*" ? j : j + 1);
  }
  return false;
}

/** Whether the glob holds a wildcard (else it is one name). */
export const isPattern = (glob: string) => /[*?]/.test(glob);
