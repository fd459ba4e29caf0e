/**
 * The PostgreSQL server test/setup.ts starts (or POSTGRES_URL points at): Debian's real
 * postgresql, on a free port of 127.0.0.1, in a data directory of the run. It shows what the
 * store relies on: a password login over TCP (a wrong password is refused), a database of one's
 * own per test server, a server that never runs as root, and a stop that leaves nothing behind.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import pg from "pg";
import { isAlive, postgresAnswers, postgresService, requireEnv, startCluster } from "./cluster.ts";

/** The effective uid of a running process. */
function uidOf(pid: number): number {
  const m = /^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1]);
}

describe("postgres service", () => {
  test("POSTGRES_URL logs in with its password and may create a database; a wrong password is refused", async () => {
    const url = new URL(requireEnv("POSTGRES_URL"));
    expect(url.protocol).toBe("postgres:");
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.password.length).toBeGreaterThan(16);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    const name = `t_${crypto.randomUUID().replaceAll("-", "")}`;
    try {
      await client.query(`CREATE DATABASE ${name}`);
      const other = new URL(url);
      other.pathname = `/${name}`;
      expect(await postgresAnswers(other.toString())).toBe(true);
    } finally {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    }
    const wrong = new URL(url);
    wrong.password = "not-the-password";
    await expect(postgresAnswers(wrong.toString())).rejects.toThrow(/password authentication failed/);
  });

  test("a server of its own never runs as root, and stops without a trace while a client is connected", async () => {
    const cluster = await startCluster({ services: ["postgres"], ownerPid: process.pid });
    const proc = cluster.services[0]!;
    try {
      expect(proc.env.POSTGRES_URL).toStartWith("postgres://loupe:");
      expect(uidOf(proc.pid)).not.toBe(0);
      expect(await postgresService.probe(proc)).toBe(true);
      const client = new pg.Client({ connectionString: proc.env.POSTGRES_URL });
      await client.connect();
      client.on("error", () => {});
      // A client still connected does not hold the stop up (a fast shutdown, not a smart one).
      const t0 = Date.now();
      await cluster.stop({ graceMs: 5_000 });
      expect(Date.now() - t0).toBeLessThan(5_000);
      await client.end().catch(() => {});
      expect(isAlive(proc.pid)).toBe(false);
      expect(isAlive(proc.watchdogPid!)).toBe(false);
      expect(existsSync(proc.runDir)).toBe(false);
    } finally {
      await cluster.stop({ graceMs: 1_000 });
    }
  }, 30_000);
});
