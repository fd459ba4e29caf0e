/**
 * What the cluster's first start says while it downloads (some 250 MB of jars from Maven
 * Central, minutes on a slow line) and makes the registry's class archive: which step of how
 * many, what is being fetched, how far it got, what comes next. Nothing is said when
 * everything is cached: the lines come only with a step that has work to do.
 */

/** One line of progress; stderr by default (stdout carries the cluster's KEY=VALUE lines). */
export type ProgressLog = (line: string) => void;

let out: ProgressLog = (line) => console.error(line);

/** Where progress lines go (tests and tools may silence or capture them). */
export function setProgressLog(log: ProgressLog): void {
  out = log;
}

export function progress(line: string): void {
  out(line);
}

/** A download Maven reports in batch mode, e.g. `Downloaded from central: <url> (16 MB at 5.2 MB/s)`. */
export interface Downloaded {
  file: string;
  bytes: number;
}

const UNITS: Record<string, number> = { B: 1, kB: 1000, KB: 1000, MB: 1000 ** 2, GB: 1000 ** 3 };

/** The file and size of a Maven "Downloaded from" line; null for any other line. */
export function parseMavenLine(line: string): Downloaded | null {
  const m = /Downloaded from [^:]+: (\S+) \(([\d.,]+) (B|kB|KB|MB|GB)\b/.exec(line);
  if (!m) return null;
  const url = m[1]!;
  const amount = Number(m[2]!.replace(",", ""));
  return { file: url.slice(url.lastIndexOf("/") + 1), bytes: Math.round(amount * UNITS[m[3]!]!) };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1000 ** 2) return `${Math.round(bytes / 1000)} kB`;
  return `${(bytes / 1000 ** 2).toFixed(1)} MB`;
}

/**
 * The fetch steps a start still has to do, in order, so each says "step i of n" and what comes
 * next. startCluster (and `cli.ts fetch`) plan them before fetching.
 */
let plan: string[] = [];

export function planSteps(steps: string[]): void {
  plan = steps;
}

/** The steps are done (or the start failed): later fetches are numbered anew. */
export function endPlan(): void {
  plan = [];
}

/** "[2/4] <what> (next: <following>)". */
export function stepLine(what: string, detail = ""): string {
  const i = plan.indexOf(what);
  const head = i >= 0 ? `[${i + 1}/${plan.length}] ` : "";
  const next = i >= 0 && i + 1 < plan.length ? `; next: ${plan[i + 1]}` : i >= 0 ? "; the last download" : "";
  return `${head}${what}${detail ? `: ${detail}` : ""}${next}`;
}

/**
 * Follows one Maven run's output: a line when the step starts, one every `everyMs` while files
 * come in (files and bytes so far, the latest file), and one at its end.
 */
export class DownloadProgress {
  files = 0;
  bytes = 0;
  #last = "";
  #lastSaid = 0;
  readonly #started: number;

  constructor(
    readonly what: string,
    readonly everyMs = 3_000,
    readonly now: () => number = Date.now,
  ) {
    this.#started = now();
    this.#lastSaid = this.#started;
    progress(stepLine(what, "fetching from Maven Central (or ~/.m2) ..."));
  }

  line(text: string): void {
    const d = parseMavenLine(text);
    if (!d) return;
    this.files++;
    this.bytes += d.bytes;
    this.#last = d.file;
    if (this.now() - this.#lastSaid >= this.everyMs) {
      this.#lastSaid = this.now();
      progress(`  ${this.what}: ${this.files} files, ${formatBytes(this.bytes)} downloaded so far (${this.#last})`);
    }
  }

  done(): void {
    const seconds = Math.round((this.now() - this.#started) / 1000);
    const got = this.files === 0 ? "all in ~/.m2 already" : `${this.files} files, ${formatBytes(this.bytes)} downloaded`;
    progress(`  ${this.what}: done in ${seconds} s (${got})`);
  }
}
