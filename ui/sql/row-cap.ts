/**
 * How many rows the table keeps: a setting of this browser (localStorage), 100,000 unless changed.
 * Rows beyond it are counted, not kept, so the page's memory stays bounded whatever a query returns.
 */
const KEY = "loupe.sql.rowCap";
export const DEFAULT_ROW_CAP = 100_000;
export const MIN_ROW_CAP = 100;
export const MAX_ROW_CAP = 1_000_000;

export const validRowCap = (n: number) => Number.isInteger(n) && n >= MIN_ROW_CAP && n <= MAX_ROW_CAP;

export function readRowCap(): number {
  const n = Number(localStorage.getItem(KEY));
  return validRowCap(n) ? n : DEFAULT_ROW_CAP;
}

export function saveRowCap(n: number): void {
  if (n === DEFAULT_ROW_CAP) localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, String(n));
}
