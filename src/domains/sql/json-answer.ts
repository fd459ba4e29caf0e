/**
 * The single-JSON-object form of a query's answer (SPEC: the earlier form of GET /api/sql/data):
 *
 *   {"messages":[<record>,...],"offsets":[{partition,min,max},...],"stopReason":"END",
 *    "ranges":[{partition,from,to,next},...],
 *    "stopLimit":{setting,value,of?,bound?},   (when a bound ended the query)
 *    "resume":"0:177000-1500000;limit=7",     (when a bound cut the read short: see resume.ts)
 *    "skippedPartitions":[{partition,reason}],"warnings":[...],   (only when partitions were left out)
 *    "clampedSettings":{...},   (only when the server lowered a setting)
 *    "maskedFields":["ssn",...]}   (only when masking policies hid fields from the caller: docs/masking.md)
 *
 * The whole answer is held in memory until the query ends, so what it produces is bounded:
 * JSON_ANSWER_MAX_BYTES at most, whatever max.size asks. A query that reaches the bound ends
 * with stopReason MAX_SIZE and answers what fits (a client after a few records still gets them;
 * one that needs them all learns it did not get them, and can use the stream form).
 */

import type { Context } from "hono";
import { type QueryEnd, type RecordFraming, RecordText } from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../../http/context.ts";
import { SqlError } from "../../sql/index.ts";
import type { PreparedQuery } from "./service.ts";

/** Most bytes of one JSON answer. */
export const JSON_ANSWER_MAX_BYTES = 32 * 1024 * 1024;
/** Room kept for what follows the records (offsets of up to some 20 000 partitions). */
const ENVELOPE_BYTES = 1024 * 1024;
/** Each record an element of the `messages` array. */
const ARRAY_ELEMENT: RecordFraming = { before: "", after: "," };

const HEAD = Buffer.from('{"messages":[');
const EMPTY = new Uint8Array(0);

/**
 * A query that did not compile, or that met a limit of the language while running: 400 with the
 * validation object (as /api/sql/validation answers it), plus the fields of every error body.
 */
function invalidBody(c: Context<AppEnv>, err: Error) {
  const at = err instanceof SqlError ? err : err.cause instanceof SqlError ? err.cause : null;
  return {
    isValid: false,
    line: at?.line ?? 0,
    column: at?.column ?? 0,
    message: err.message,
    error_code: 400,
    code: "VALIDATION_FAILED",
    requestId: c.get("requestId"),
  };
}

export function jsonInvalid(c: Context<AppEnv>, err: Error): Response {
  return c.json(invalidBody(c, err), 400);
}

export async function jsonAnswer(c: Context<AppEnv>, prepared: PreparedQuery, withHeaders = false): Promise<Response> {
  const records = new RecordText(JSON.stringify(prepared.plan.topic), ARRAY_ELEMENT, withHeaders);
  const parts: Uint8Array[] = [HEAD];
  let end: QueryEnd | null = null;
  for await (const ev of prepared.events(c.req.raw.signal, { sink: records, maxOutputBytes: JSON_ANSWER_MAX_BYTES - ENVELOPE_BYTES })) {
    // The bytes live in the sink's reused buffer: copied.
    if (ev.type === "records") parts.push(ev.bytes.slice());
    else if (ev.type === "end") end = ev.end;
    else if (ev.error.status === 400) return c.json(invalidBody(c, ev.error), 400);
    else throw new AppError("PAYLOAD_TOO_LARGE", ev.error.message);
  }
  // The last record's comma closes the array instead.
  const last = parts.at(-1)!;
  if (last !== HEAD) parts[parts.length - 1] = last.subarray(0, last.byteLength - 1);
  const { clamped } = prepared.compiled;
  // Partitions left out (no leader) are named, and the warning the UI shows.
  const skipped = end?.skippedPartitions
    ? `,"skippedPartitions":${JSON.stringify(end.skippedPartitions)},"warnings":${JSON.stringify(end.warnings ?? [])}`
    : "";
  // What was read of what, the bound that ended the query, and where it would go on.
  const read = `,"ranges":${JSON.stringify(end?.ranges ?? [])}${end?.stopLimit ? `,"stopLimit":${JSON.stringify(end.stopLimit)}` : ""}${
    end?.resume ? `,"resume":${JSON.stringify(end.resume)}` : ""
  }`;
  const tail = `],"offsets":${JSON.stringify(end?.offsets ?? [])},"stopReason":${JSON.stringify(end?.stopReason ?? "CLIENT")}${read}${skipped}${
    clamped ? `,"clampedSettings":${JSON.stringify(clamped)}` : ""
  }${end?.maskedFields ? `,"maskedFields":${JSON.stringify(end.maskedFields)}` : ""}}`;
  parts.push(Buffer.from(tail));
  // The parts as they are, one after the other: no 32 MiB copy to join them first, and each
  // part is let go once written.
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (next < parts.length) {
        controller.enqueue(parts[next]!);
        parts[next++] = EMPTY;
      } else controller.close();
    },
  });
  return c.body(body, 200, { "content-type": "application/json" });
}
