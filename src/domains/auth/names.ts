/**
 * Identity names. A directory compares names without case, ignoring surrounding and repeated
 * spaces, so `Carol`, `CAROL` and ` carol ` are one account there; compatibility forms are folded
 * too (`Ｃarol` is `carol`). Counted by this key, no spelling of a name gets its own budget.
 */
export const nameKey = (name: string): string => name.normalize("NFKC").trim().replace(/\s+/g, " ").toLowerCase();
