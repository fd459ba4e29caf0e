/**
 * The command line loads what a command needs, when it needs it: `--version` and `help` answer
 * without loading the server (issue 24: `loupe --version` took 0.7-1.0 s and 110 MB, for the
 * whole server it loaded first). A preload tells which of the server's modules load.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "loupe-main-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Says on stderr each of the server's entry modules that loads. */
const WATCH = join(dir, "watch.ts");
writeFileSync(
  WATCH,
  `Bun.plugin({
    name: "watch-server-modules",
    setup(build) {
      build.onLoad({ filter: /src[\\\\/](compose|app|routes)\\.ts$|@platformatic[\\\\/]kafka[\\\\/]dist[\\\\/]index\\.js$/ }, async (args) => {
        process.stderr.write("loaded " + args.path + "\\n");
        return { contents: await Bun.file(args.path).text(), loader: args.path.endsWith(".js") ? "js" : "ts" };
      });
    },
  });
`,
);

function run(args: string[]): { code: number; stdout: string; loaded: string[] } {
  const r = Bun.spawnSync([process.execPath, "--preload", WATCH, join(root, "src/main.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
  const loaded = r.stderr
    .toString()
    .split("\n")
    .filter((l) => l.startsWith("loaded "));
  return { code: r.exitCode, stdout: r.stdout.toString(), loaded };
}

describe("loupe's command line", () => {
  test("the watch sees the server's modules load (so that seeing none means none loaded)", () => {
    const r = Bun.spawnSync([process.execPath, "--preload", WATCH, "-e", `await import(${JSON.stringify(join(root, "src/compose.ts"))})`], {
      stderr: "pipe",
    });
    const loaded = r.stderr.toString();
    expect(loaded).toContain("compose.ts");
    expect(loaded).toContain("@platformatic");
  });

  test("24.s: `loupe --version` and `help` answer without loading the server, its routes or the Kafka client", () => {
    for (const args of [["--version"], ["-v"], ["version"], ["help"]]) {
      const r = run(args);
      expect(r.code).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(0);
      expect(r.loaded).toEqual([]);
    }
  });

  test("24.s: `loupe check-config` loads the config only, not the server", () => {
    const file = join(dir, "ok.toml");
    writeFileSync(file, `[server]\nport = 8080\n`);
    const r = run(["check-config", "--config", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("configuration is valid");
    expect(r.loaded).toEqual([]);
  });
});
