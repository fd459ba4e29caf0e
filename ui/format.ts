/**
 * The UI's one number format, and the sizes and durations written with it: counts grouped the
 * same on every page ("1,234,567"), sizes in the binary units the brokers count in, time spans
 * from milliseconds to days. Config values in words (exact or "≈") are TopicShared.ts's, on top.
 */

/** Grouped en-US digits, up to three decimals: `number.format(1234567)` is "1,234,567". */
export const number = new Intl.NumberFormat("en-US");
export const oneDecimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

/** A count; unknown (null) as a dash. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : number.format(n);
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** `512 B`, `1.5 KiB`, `256 MiB`: binary units, at most one decimal; unknown (null) as a dash. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : oneDecimal.format(value)} ${BYTE_UNITS[unit]}`;
}

/** `850 ms`, `4.2 s`, `5 min 0 s`, `3 h 12 min`, `2 d 3 h`: a run's time or a processor's uptime. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
