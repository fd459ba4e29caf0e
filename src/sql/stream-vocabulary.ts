/**
 * The words stream programs add to the query dialect, as plain lists for an editor's completion
 * (beside src/sql/vocabulary.ts, and like it free of the evaluator so the browser bundle can
 * import it). test/sql/stream-vocabulary.test.ts holds them equal to what the parser accepts.
 */
export { PROGRAM_SETTING_NAMES as STREAM_SETTING_NAMES } from "./stream-settings.ts";

export const STREAM_KEYWORDS = ["INSERT", "INTO", "STREAM", "GROUP", "BY", "WINDOW", "TUMBLE", "HOP"] as const;

export const AGGREGATE_NAMES = ["COUNT", "SUM", "AVG", "MIN", "MAX"] as const;

/** The short units of windows (the long ones, SECOND(S) and so on, are accepted too). */
export const TIME_UNIT_NAMES = ["ms", "s", "m", "h", "d"] as const;
