/**
 * Path segments a proxy puts into a backend's URL. Each comes from one path parameter of a
 * Loupe route (decoded once by the router), is checked here, and is encoded whole, so that no
 * value can add a segment, climb out of the route with `..`, or reach another backend path.
 */

import { badRequest } from "../errors.ts";

const MAX_SEGMENT = 1024;

/**
 * A name (connector, subject, plugin) as one encoded path segment. Names may hold spaces and
 * slashes (encoded, they stay one segment); refused with 400: empty, longer than 1,024
 * characters, control characters, backslashes, and any `.` or `..` piece between slashes, which
 * a backend's path normalisation could read as a step up.
 */
export function nameSegment(what: string, value: string): string {
  if (value.length === 0) throw badRequest(`The ${what} is empty`);
  if (value.length > MAX_SEGMENT) throw badRequest(`The ${what} is longer than ${MAX_SEGMENT} characters`);
  if (/[\u0000-\u001f\u007f\\]/.test(value)) throw badRequest(`The ${what} holds a control character or a backslash`);
  if (value.split("/").some((piece) => piece === "." || piece === ".."))
    throw badRequest(`The ${what} '${value}' holds a '.' or '..' path step`);
  return encodeURIComponent(value);
}

/** A non-negative integer path segment (a task id, a schema id) in [min, max]; 400 otherwise. */
export function intSegment(what: string, value: string, min = 0, max = 2 ** 31 - 1): string {
  if (!/^\d{1,10}$/.test(value)) throw badRequest(`The ${what} '${value}' is not an integer`);
  const n = Number(value);
  if (n < min || n > max) throw badRequest(`The ${what} ${value} is out of range (${min} to ${max})`);
  return String(n);
}
