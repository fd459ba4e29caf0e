/**
 * Where a query that a limit cut short goes on: the end record's `resume`, given back as the
 * `resume` parameter of the same query, reads what was not read yet and returns what is left of
 * its LIMIT. Text, so that it fits in a URL and a person can read it:
 *
 *   resume  = range *("," range) *(";" option)
 *   range   = partition ":" from "-" to         the offsets still to read in that partition: [from, to)
 *   option  = "limit=" count | "skip=" count   what is left of `LIMIT [skip,] n` (skip: 0 when absent)
 *
 * e.g. `0:177000-1500000,2:310-400;limit=7`. A resumed query reads only the partitions named, each
 * within the range the query itself plans (its WHERE on partition, offset and time), so a resume
 * can narrow a query, never widen it; its LIMIT and skip are at most the query's own.
 */

/** The offsets a query reads in one partition, and how far it got. */
export interface ReadRange {
  partition: number;
  /** The first offset asked. */
  from: number;
  /** The end of the range, not included: the partition's end offset when the query began (its snapshot). */
  to: number;
  /** The first offset not read: `to` once the partition was read whole. */
  next: number;
}

export interface Resume {
  /** Per partition, the offsets still to read: [from, to). */
  ranges: Array<{ partition: number; from: number; to: number }>;
  /** What is left of the query's LIMIT; absent: the query's own. */
  limit?: number;
  /** What is left of the records LIMIT skips. */
  skip: number;
}

/** Most partitions a resume may name: a topic has at most some tens of thousands. */
const MAX_RANGES = 100_000;

/** The resume of a read that stopped with `ranges` as they are; null when nothing is left to read. */
export function formatResume(ranges: readonly ReadRange[], limit: number, skip: number): string | null {
  const left = ranges.filter((r) => r.next < r.to).map((r) => `${r.partition}:${r.next}-${r.to}`);
  if (left.length === 0) return null;
  return `${left.join(",")};limit=${limit}${skip > 0 ? `;skip=${skip}` : ""}`;
}

const RANGE = /^(\d{1,10}):(\d{1,16})-(\d{1,16})$/;
const OPTION = /^(limit|skip)=(\d{1,16})$/;

/** The resume written in `text`, or the reason it is not one. */
export function parseResume(text: string): Resume | string {
  const [list = "", ...options] = text.split(";");
  const resume: Resume = { ranges: [], skip: 0 };
  const seen = new Set<number>();
  const items = list.split(",");
  if (items.length > MAX_RANGES) return `at most ${MAX_RANGES} partitions`;
  for (const item of items) {
    const m = RANGE.exec(item.trim());
    if (!m) return `'${item.slice(0, 40)}' is not partition:from-to`;
    const [partition, from, to] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (partition > 2_147_483_647 || !Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return `'${item}' is out of range`;
    if (from > to) return `'${item}' ends before it starts`;
    if (seen.has(partition)) return `partition ${partition} is named twice`;
    seen.add(partition);
    resume.ranges.push({ partition, from, to });
  }
  const given = new Set<string>();
  for (const option of options) {
    const m = OPTION.exec(option.trim());
    if (!m) return `'${option.slice(0, 40)}' is not limit=n or skip=n`;
    const [name, value] = [m[1] as "limit" | "skip", Number(m[2])];
    if (given.has(name)) return `${name} is given twice`;
    given.add(name);
    if (!Number.isSafeInteger(value)) return `${name} is out of range`;
    if (name === "limit") {
      if (value < 1) return "limit must be at least 1";
      resume.limit = value;
    } else resume.skip = value;
  }
  return resume;
}

/**
 * The ranges a resumed query reads: those the query plans, narrowed to the resume's (a partition
 * the resume does not name is not read).
 */
export function resumeRanges<R extends { partition: number; from: number; to: number }>(planned: R[], resume: Resume): R[] {
  const asked = new Map(resume.ranges.map((r) => [r.partition, r]));
  const out: R[] = [];
  for (const r of planned) {
    const a = asked.get(r.partition);
    if (!a) continue;
    const from = Math.max(r.from, a.from);
    out.push({ ...r, from, to: Math.max(from, Math.min(r.to, a.to)) });
  }
  return out;
}
