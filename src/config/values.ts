/**
 * The value types the config file's sections share (durations, sizes, group names): apart from
 * schema.ts so that each section's module (ldap.ts) takes them without importing the whole
 * schema, which imports the sections.
 */
import { z } from "zod";

/** Durations in config accept milliseconds as a number or text like `30s`, `15m`, `8h`, `7d`. */
export const duration = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(/^\s*\d+\s*(ms|s|m|h|d)?\s*$/i, "expected a duration such as 500ms, 30s, 15m, 8h or 7d")
    .transform(parseDuration),
]);

function parseDuration(text: string): number {
  const m = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!m) throw new Error(`not a duration: ${text}`);
  const n = Number(m[1]);
  const unit = (m[2] ?? "ms").toLowerCase();
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit] ?? 1;
  return n * factor;
}

/** Sizes in config accept bytes as a number or text like `64m`, `256mb`, `1g` (powers of 1024). */
export const byteSize = z.union([
  z.number().int().positive(),
  z
    .string()
    .regex(/^\s*\d+\s*(b|k|kb|m|mb|g|gb)?\s*$/i, "expected a size such as 65536, 512k, 64m or 1g")
    .transform((text) => {
      const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(text)!;
      return Number(m[1]) * 1024 ** ({ k: 1, m: 2, g: 3 }[(m[2] ?? "").charAt(0).toLowerCase()] ?? 0);
    }),
]);

/** Starts with a letter or digit: `.` and `..` would not survive in a URL path. */
export const groupName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit");
