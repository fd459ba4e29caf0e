/**
 * JSON text from outside Loupe (request bodies, websocket frames, the answers of Connect and the
 * schema registry, schemas users store) parsed with a bound on its nesting.
 *
 * JSON.parse itself takes a 400 000-level `[[[[...]]]]` in a few milliseconds, but everything that
 * walks the value afterwards recurses: zod, JSON.stringify, the audit's masking, Avro's schema
 * reader. One such body overflowed the stack (RangeError) deep inside a handler and answered 500
 * after seconds of work. The text is therefore scanned first: brackets outside strings are
 * counted, and text nested deeper than the bound is refused before JSON.parse builds anything.
 *
 * The bound, 128 levels, is far beyond what any API body, connector config, registry answer or
 * Avro / JSON schema of this service nests in practice (Jackson, which Connect and the registry
 * use, stops at 1000), and far below what the recursive walkers survive (several thousand).
 * The scan is one pass of charCodeAt; text of at most 2 x 128 characters cannot be valid JSON
 * nested deeper and is not scanned at all.
 */

/** Deepest nesting of arrays and objects accepted in JSON from outside. */
export const MAX_JSON_DEPTH = 128;

/**
 * Deepest nesting of Avro and JSON schema text (a topic's metadata, the registry's schemas): as
 * deep as the registries' own parser (Jackson) takes it, so that a schema a registry holds stays
 * readable. Avro's schema reader and codecs were measured fine far deeper (6000 levels).
 */
export const MAX_SCHEMA_DEPTH = 1000;

/** JSON nested deeper than the bound: a SyntaxError, as JSON.parse's own refusals are. */
export class JsonDepthError extends SyntaxError {
  override readonly name = "JsonDepthError";

  constructor(
    readonly maxDepth: number,
    /** Offset of the opening bracket that went past the bound. */
    readonly position: number,
  ) {
    super(`JSON nested deeper than ${maxDepth} levels (at character ${position})`);
  }
}

/**
 * The offset of the first `[` or `{` outside a string that opens level `maxDepth + 1`, or -1.
 * Not a validator: text that is no JSON is scanned as well as it goes and left to JSON.parse.
 */
export function jsonDepthExceededAt(text: string, maxDepth = MAX_JSON_DEPTH): number {
  const n = text.length;
  // Valid JSON nested deeper than maxDepth holds maxDepth + 1 opening and as many closing brackets.
  if (n <= 2 * maxDepth + 1) return -1;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: on to its closing quote (one not escaped by an odd run of backslashes).
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return -1;
        let slashes = 0;
        while (text.charCodeAt(q - 1 - slashes) === 0x5c) slashes++;
        i = q;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

/** Throws JsonDepthError when `text` nests deeper than `maxDepth`. */
export function checkJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): void {
  const at = jsonDepthExceededAt(text, maxDepth);
  if (at >= 0) throw new JsonDepthError(maxDepth, at);
}

/** JSON.parse, after the depth check: throws a SyntaxError (JsonDepthError or JSON.parse's own). */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  checkJsonDepth(text, maxDepth);
  return JSON.parse(text);
}
