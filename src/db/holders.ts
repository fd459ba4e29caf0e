/**
 * Which processes have a data directory's store open, so that `loupe restore` refuses to replace
 * a store a server is using. Each open store leaves a marker file `loupe.db.open-<pid>-<n>` in the
 * data directory and removes it when it closes; a process that died (SIGKILL, a crash) leaves
 * its marker, which counts for nothing once that pid is no longer alive.
 *
 * Why not a lock of SQLite's: an idle connection holds none (measured: a read transaction kept
 * open on a side file showed no lock in /proc/locks under Bun 1.4.5, and switching the store out
 * of WAL mode succeeded while another process had it open), and an advisory lock of the process
 * (flock) is not in Bun's API.
 */
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const PREFIX = "loupe.db.open-";
let counter = 0;

/** Leaves this process's marker; the function returned removes it. */
export function markOpen(dataDir: string): () => void {
  const file = join(dataDir, `${PREFIX}${process.pid}-${++counter}`);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  return () => rmSync(file, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it lives, under another user.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The live processes (this one included) that have the store of `dataDir` open. */
export function storeHolders(dataDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch {
    return [];
  }
  const pids = new Set<number>();
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) pids.add(pid);
  }
  return [...pids].sort((a, b) => a - b);
}
