/**
 * Request bodies checked in the browser with the route's own zod schema before they are sent:
 * a form shows the words the server would answer (its 400, same message), without the round
 * trip. The body is sent as given, not as parsed: the server parses it again.
 */
import type { z } from "zod";
import { ApiError } from "../session.ts";

export function checked<S extends z.ZodType>(schema: S, body: z.input<S>): z.input<S> {
  const res = schema.safeParse(body);
  if (res.success) return body;
  const issue = res.error.issues[0];
  const field = issue?.path.map(String).join(".") || "(body)";
  throw new ApiError(400, `Invalid request body${issue ? `: ${field}: ${issue.message}` : ""}`);
}
