/**
 * Every bound on the size of a query and on the work of evaluating it, in one
 * place. A query is text from any user of the API, and one query must not be
 * able to hold the event loop or the memory that every other request shares.
 *
 * Limits on the text are checked when the query is validated and reported as
 * SqlError with the position where they are exceeded. Limits on values exist
 * only when a record is evaluated; going past one throws QueryLimitError, which
 * ends the query (the executor turns it into the query's error).
 */

export const QUERY_LIMITS = Object.freeze({
  /**
   * Longest query text, in UTF-16 code units (64 KiB). Reported at the first
   * character past the limit. Longer text is never tokenized.
   */
  queryLength: 65_536,
  /** Most tokens in a query: bounds the size of the syntax tree, hence the work per record. */
  tokens: 10_000,
  /**
   * Deepest nesting of parentheses, function calls, CAST and unary operators
   * (`NOT NOT x`, `- - x`). The parser, the analyzer and the evaluator recurse
   * over that nesting, so it must stay far below the stack's depth. Chains of
   * binary operators (`a + b + c`, `x OR y OR z`) are parsed without recursion
   * and are bounded by the token limit instead. Also the most fields of an
   * INSERT column path (`_value.a.b.c`): each is a level of the record written.
   */
  depth: 64,
  /** Most output columns of a projection; `_meta.*` counts as its 5 columns. */
  projections: 64,
  /** Most items in one `IN (...)` list: each is compared with every record. */
  inListItems: 1_000,
  /**
   * Longest LIKE pattern, in code points. Matching costs at most the text's
   * length times 2, or times the length / 32 of the longest segment holding
   * `_`. A literal pattern is checked when the query is validated; a computed
   * one when it is evaluated.
   */
  likePattern: 1_000,
  /**
   * Largest string a function, a cast or the text of an object may produce, in
   * UTF-16 code units (1 MiB of them, 2 MiB of memory). REPLACE and CONCAT
   * check before building the result.
   */
  computedValue: 1_048_576,
  /**
   * The work of evaluating one record (its filter, or its projection), in
   * units of about one code unit built or scanned: by functions and casts, by
   * LIKE (text length x steps per code point), SUBSTRING, LEN and `=` on arrays and
   * objects; operations slower per character count more (WORK_COST). It
   * bounds both the time one record can hold the event loop (20 to 150 ms at
   * worst, measured on a shared and loaded core of the development machine)
   * and the memory of the values alive at once (at most 2 bytes per unit).
   */
  recordWork: 8_388_608,
  /**
   * Largest JSON text of one projected record, in UTF-16 code units (4 MiB of them). Columns
   * may each hold a value up to computedValue, and a projection may name one large value many
   * times: the record's text is bounded before it is built, since building it is one
   * synchronous step that holds the event loop. `SELECT *` passes values on as they are.
   */
  projectedRecord: 4_194_304,
} as const);

/**
 * Work units per code unit (or element) by kind of operation, so that a unit
 * costs about the same time whatever spends it (measured with the worst input
 * of each kind). The base, 1, is one step of LIKE's scan: one code point of
 * the text against one 32-character word of a segment.
 */
export const WORK_COST = Object.freeze({
  /** Building a string by concatenating or slicing. */
  build: 1,
  /** Walking a string code point by code point (LEN, SUBSTRING). */
  codePoints: 3,
  /** Upper- or lower-casing, slow outside ASCII. */
  caseMapping: 3,
  /** Reading a long string as a number. */
  numberText: 4,
  /** Each occurrence REPLACE cuts out and joins again. */
  replacePiece: 24,
  /** The JSON text of an object, per code unit. */
  jsonText: 3,
  /** The same with bigints inside, which JSON.stringify writes only through a slow replacer. */
  jsonTextWithBigints: 24,
  /** Each element of an array visited to bound its JSON text's length first. */
  jsonElement: 4,
  /** Each property of an object visited to bound its JSON text's length first. */
  jsonKey: 8,
  /** Each element or property `=` compares in arrays and objects. */
  deepEqual: 4,
  /** Code units compared per unit when two long strings are compared (memory speed). */
  comparedPerUnit: 4,
} as const);

/**
 * Bounds of stream programs, checked when a program is validated and reported with the position
 * that exceeds them, as the query limits are.
 */
export const STREAM_LIMITS = Object.freeze({
  /**
   * Most windows one record falls in: a HOP window of size S advancing by A puts every record
   * in S/A windows, and the state holds that many groups per distinct key (a TUMBLE puts it in
   * one). `HOP(1, d, 1, ms)` would make 86.4 million accumulators per record and hold the event
   * loop for seconds on each; 100 keeps a record's work and state within about what a query
   * record may cost. It bounds the advance by the size: at least 1/100 of it.
   */
  windowsPerRecord: 100,
} as const);

export type QueryLimit = "computedValue" | "likePattern" | "recordWork" | "projectedRecord";

/**
 * A record's evaluation went past a limit of QUERY_LIMITS. It ends the query:
 * the message says which limit, its value, and what exceeded it.
 */
export class QueryLimitError extends Error {
  override readonly name = "QueryLimitError";

  constructor(
    readonly limit: QueryLimit,
    message: string,
  ) {
    super(message);
  }
}

/** 1048576 -> "1 Mi": how the large limits are shown in messages. */
function mebi(units: number): string {
  return units % 1_048_576 === 0 ? `${units / 1_048_576} Mi` : String(units);
}

/** Throws when a string of `length` code units, about to be built by `what`, is too large. */
export function checkComputedLength(length: number, what: string): void {
  if (length > QUERY_LIMITS.computedValue) {
    throw new QueryLimitError("computedValue", `A computed value is larger than ${mebi(QUERY_LIMITS.computedValue)}B (${what})`);
  }
}

/** Throws when a LIKE pattern computed from a record is longer than the limit. */
export function likePatternTooLong(length: number): QueryLimitError {
  return new QueryLimitError("likePattern", `A LIKE pattern is longer than ${QUERY_LIMITS.likePattern} characters (found ${length})`);
}

/**
 * Work spent on the record being evaluated. Evaluation of one record is
 * synchronous and never interleaves with another, so one counter serves every
 * query; each evaluation starts by resetting it (startRecord).
 */
let spent = 0;

/** Starts the work count of one record's evaluation. */
export function startRecord(): void {
  spent = 0;
}

/** Counts `units` of work done by `what`; throws when the record's allowance is used up. */
export function spend(units: number, what: string): void {
  spent += units;
  if (spent > QUERY_LIMITS.recordWork) {
    throw new QueryLimitError("recordWork", `One record needs more than ${mebi(QUERY_LIMITS.recordWork)} units of string work (${what})`);
  }
}
