import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./helpers/wait.ts";

/**
 * The product is the compiled executable: build it as `bun build.ts` does, start it
 * against the real test broker, and talk to it over a real port.
 */
const root = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "loupe-bin-"));
const exe = join(dir, "loupe");
let proc: ReturnType<typeof Bun.spawn> | undefined;
afterAll(() => {
  proc?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = s.port;
  s.stop(true);
  return p;
}

describe("compiled executable", () => {
  test("builds, reports its version, serves /api/health and / against the real broker", async () => {
    const build = Bun.spawn([process.execPath, join(root, "build.ts"), "--outfile", exe], { cwd: root, stdout: "pipe", stderr: "pipe" });
    expect(await build.exited).toBe(0);

    const version = Bun.spawnSync([exe, "--version"]);
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    expect(version.stdout.toString().trim()).toBe(pkg.version);

    const port = await freePort();
    const t0 = performance.now();
    proc = Bun.spawn([exe, "serve"], {
      env: {
        PATH: process.env.PATH ?? "",
        LOUPE_PORT: String(port),
        LOUPE_DATA_DIR: join(dir, "data"),
        LOUPE_KAFKA_BOOTSTRAP: process.env.KAFKA_BOOTSTRAP!,
        LOUPE_ADMIN_PASSWORD: "bin-admin-pw",
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    const base = `http://127.0.0.1:${port}`;
    const health = await waitFor(() => fetch(`${base}/api/health`).catch(() => undefined), {
      timeoutMs: 15_000,
      what: "the executable's first health answer",
    });
    const startMs = performance.now() - t0;
    expect(health.status).toBe(200);
    const body = (await health.json()) as { status: string; clusters: { status: string }[] };
    expect(body.status).toBe("UP");
    expect(body.clusters[0]!.status).toBe("UP");

    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain("<title>Loupe</title>");
    expect((await fetch(`${base}/api/docs`)).status).toBe(200);
    const login = await fetch(`${base}/api/login`, { method: "POST", body: JSON.stringify({ user: "admin", password: "bin-admin-pw" }) });
    expect(login.status).toBe(200);

    // Idle RSS: once start-up and the first requests have settled, two readings a quarter of a
    // second apart agree within 1 MiB (or the last reading after 10 s).
    const pid = proc.pid;
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    let previous = rss();
    const rssKb = await waitFor(
      () => {
        const now = rss();
        const settled = Math.abs(now - previous) <= 1024;
        previous = now;
        return settled && now;
      },
      { timeoutMs: 10_000, intervalMs: 250, what: "a settled RSS" },
    ).catch(() => previous);
    console.log(`[binary] start-up to first health answer: ${startMs.toFixed(0)} ms; idle RSS: ${(rssKb / 1024).toFixed(1)} MiB`);

    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 120_000);
});
