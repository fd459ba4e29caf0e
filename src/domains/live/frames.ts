/**
 * The frames of the live websocket (`/api/kafka/ws/{clientId}`), as the Go and Python clients
 * send and read them (CLIENTS.md 5.5):
 *
 *   client -> server  {"type":"LOGIN|SUBSCRIBE|UNSUBSCRIBE|PUBLISH|COMMIT","correlationId":<int64>,
 *                      "content":"<JSON text>","authToken":"<token or empty>"}
 *   server -> client  {"type":"SUCCESS|ERROR|INVALIDREQUEST|KAFKAMSG|HEARTBEAT","correlationId":<as sent>,
 *                      "content":<any JSON>}
 *
 * `content` of a request is a string holding JSON text (an object is taken too). A frame or a
 * content nested deeper than MAX_JSON_DEPTH (util/json.ts) is refused unparsed. The reply echoes
 * the request's correlationId as it was written, digits and all: an int64 beyond 2^53 survives.
 * ERROR and INVALIDREQUEST carry a string (the Go CLI decodes it as one).
 */

import { z } from "zod";
import { JsonDepthError, parseJson } from "../../util/json.ts";

export const REQUEST_TYPES = ["LOGIN", "SUBSCRIBE", "UNSUBSCRIBE", "PUBLISH", "COMMIT"] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];
export type ReplyType = "SUCCESS" | "ERROR" | "INVALIDREQUEST" | "KAFKAMSG" | "HEARTBEAT";

/** Most SQL statements one SUBSCRIBE may carry (each is a subscription of the connection). */
export const MAX_SQLS_PER_REQUEST = 16;

const offsetNumber = (what: string) =>
  z.union([z.number(), z.string().regex(/^\s*-?\d+\s*$/, `${what} must be an integer`)]).transform((v, ctx) => {
    const n = typeof v === "number" ? v : Number(v.trim());
    if (!Number.isSafeInteger(n) || n < 0) {
      ctx.addIssue({ code: "custom", message: `${what} must be a non-negative integer` });
      return z.NEVER;
    }
    return n;
  });

/** What each request's content holds, once its JSON text is parsed. */
export const CONTENT = {
  LOGIN: z.object({ user: z.string().min(1).max(256), password: z.string().max(1024) }),
  SUBSCRIBE: z.object({
    sqls: z
      .array(
        z
          .string()
          .min(1, "a query is empty")
          .max(64 * 1024),
      )
      .min(1, "sqls names no query")
      .max(MAX_SQLS_PER_REQUEST, `at most ${MAX_SQLS_PER_REQUEST} queries per request`),
  }),
  UNSUBSCRIBE: z.object({ topics: z.array(z.string()).max(1024) }),
  PUBLISH: z.object({
    topic: z.string().min(1).max(249),
    key: z.string().nullable().optional(),
    value: z.string().nullable().optional(),
  }),
  COMMIT: z.object({
    commits: z
      .array(z.object({ topic: z.string().min(1).max(249), partition: offsetNumber("partition"), offset: offsetNumber("offset") }))
      .min(1, "commits names no offset")
      .max(10_000),
  }),
} satisfies Record<RequestType, z.ZodType>;

export type Content<T extends RequestType> = z.output<(typeof CONTENT)[T]>;

/** A request as parsed: its id as JSON text to echo, and its content checked against its type. */
export type Request = {
  [T in RequestType]: { type: T; correlationId: string; authToken: string; content: Content<T> };
}[RequestType];

/** A frame that is no valid request: what to answer (INVALIDREQUEST) and the id to echo. */
export interface Invalid {
  correlationId: string;
  message: string;
}

/** The correlationId as JSON text: its digits as written when a double cannot hold it. */
function correlationText(raw: string, value: unknown): string {
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  if (typeof value === "number") return /"correlationId"\s*:\s*(-?\d+)/.exec(raw)?.[1] ?? String(value);
  if (typeof value === "string") return JSON.stringify(value.slice(0, 128));
  return "0";
}

const issuesText = (e: z.ZodError) => e.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");

export function parseRequest(raw: string): Request | Invalid {
  let frame: unknown;
  try {
    frame = parseJson(raw);
  } catch (e) {
    return {
      correlationId: "0",
      message: e instanceof JsonDepthError ? `The frame is not accepted: ${e.message}` : "The frame is not JSON",
    };
  }
  if (frame === null || typeof frame !== "object" || Array.isArray(frame))
    return { correlationId: "0", message: "The frame is not a JSON object" };
  const f = frame as Record<string, unknown>;
  const correlationId = correlationText(raw, f.correlationId);
  const type = typeof f.type === "string" ? f.type.toUpperCase() : undefined;
  if (!type || !(REQUEST_TYPES as readonly string[]).includes(type))
    return {
      correlationId,
      message: `Unknown request type ${JSON.stringify(f.type ?? null)}: expected one of ${REQUEST_TYPES.join(", ")}`,
    };
  let content: unknown = f.content;
  if (typeof content === "string") {
    try {
      content = parseJson(content);
    } catch (e) {
      if (e instanceof JsonDepthError) return { correlationId, message: `The content of ${type} is not accepted: ${e.message}` };
      return { correlationId, message: `The content of ${type} is not JSON text` };
    }
  }
  const parsed = CONTENT[type as RequestType].safeParse(content);
  if (!parsed.success) return { correlationId, message: `Invalid ${type} content: ${issuesText(parsed.error)}` };
  const authToken = typeof f.authToken === "string" ? f.authToken.trim().replace(/^"(.*)"$/, "$1") : "";
  return { type, correlationId, authToken, content: parsed.data } as Request;
}

export const isInvalid = (r: Request | Invalid): r is Invalid => !("type" in r);

/** A reply frame; `contentJson` is the content as JSON text. */
export function frame(type: ReplyType, correlationId: string, contentJson: string): string {
  return `{"type":"${type}","correlationId":${correlationId},"content":${contentJson}}`;
}

/** A reply whose content is a string (SUCCESS's token or topics, ERROR's and INVALIDREQUEST's message). */
export const textFrame = (type: ReplyType, correlationId: string, text: string) => frame(type, correlationId, JSON.stringify(text));
