import type { DataType } from "./types.ts";

/**
 * Guesses the type of a topic's keys or values from a few records. Each record gives the
 * set of types it could be; the guess is the first type, in order of how telling it is, that
 * every sampled record allows.
 *
 * Registry wire format: magic byte 0, a 4-byte schema id (> 0), then the payload.
 */
const PRIORITY: DataType[] = ["JSON", "STRING", "LONG", "INT", "AVRO", "BYTES"];

const utf8 = new TextDecoder("utf-8", { fatal: true });

function candidates(bytes: Uint8Array): Set<DataType> {
  const out = new Set<DataType>(["BYTES"]);
  let text: string | null = null;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = null;
  }
  // eslint-disable-next-line no-control-regex
  if (text !== null && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) {
    out.add("STRING");
    const t = text.trim();
    if (t.startsWith("{") || t.startsWith("[")) {
      try {
        JSON.parse(t);
        out.add("JSON");
      } catch {
        /* text, not JSON */
      }
    }
  }
  if (bytes.length === 4) out.add("INT");
  if (bytes.length === 8) out.add("LONG");
  if (bytes.length > 5 && bytes[0] === 0) {
    const id = new DataView(bytes.buffer, bytes.byteOffset + 1, 4).getInt32(0);
    if (id > 0) out.add("AVRO");
  }
  return out;
}

/** null when no sample has a value (no records, or only null keys). */
export function inferType(samples: Array<Uint8Array | null>): DataType | null {
  let common: Set<DataType> | undefined;
  for (const s of samples) {
    if (s === null) continue;
    const c = candidates(s);
    const prev: Set<DataType> | undefined = common;
    common = prev === undefined ? c : new Set<DataType>([...prev].filter((t) => c.has(t)));
  }
  const found = common;
  if (found === undefined) return null;
  return PRIORITY.find((t) => found.has(t)) ?? "BYTES";
}
