import type { Context } from "hono";
import type { z } from "zod";
import { AppError } from "../errors.ts";
import { JsonDepthError, parseJson } from "../util/json.ts";

/** Field errors of a zod failure, as `details` of a 400. */
export function fieldErrors(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((i) => ({ field: i.path.map(String).join(".") || "(body)", message: i.message }));
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const res = schema.safeParse(value);
  if (!res.success) {
    const errors = fieldErrors(res.error);
    const first = errors[0];
    throw new AppError("VALIDATION_FAILED", `Invalid ${what}${first ? `: ${first.field}: ${first.message}` : ""}`, {
      details: { errors },
    });
  }
  return res.data;
}

/**
 * Reads the body as JSON whatever the content type says (some clients send JSON
 * as text/plain), then validates it. Nesting past MAX_JSON_DEPTH is refused before it is parsed
 * (see util/json.ts): 400 INVALID_JSON, like any other text that is no JSON.
 */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await c.req.text();
  let value: unknown;
  try {
    value = text.trim() === "" ? undefined : parseJson(text);
  } catch (e) {
    if (e instanceof JsonDepthError) throw new AppError("INVALID_JSON", `Request body is refused: ${e.message}`);
    throw new AppError("INVALID_JSON", `Request body is not valid JSON: ${(e as Error).message}`);
  }
  return parseWith(schema, value, "request body");
}
