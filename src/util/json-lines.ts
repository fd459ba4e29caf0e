import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";

/**
 * Appends `lines` as JSON lines to `file` (created 0600) and syncs it before returning: what the
 * retention jobs export must be on disk before the rows it holds are deleted.
 */
export function appendLinesSynced(file: string, lines: string[]): void {
  const fd = openSync(file, "a", 0o600);
  try {
    writeSync(fd, `${lines.join("\n")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
