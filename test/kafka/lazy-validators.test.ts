/**
 * The rewrite that has the Kafka client compile its option validators on first use
 * (src/kafka/lazy-validators.ts), against the pinned client: it applies to each of the modules
 * that compile them, no validator compiles at import, and a check that does run (the client's
 * `strict` option) answers as the published client does. Each case runs in a process of its
 * own, as the rewrite must be in place before the client loads.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { lazyValidatorsSource, VALIDATOR_MODULES } from "../../src/kafka/lazy-validators.ts";

const dist = dirname(require.resolve("@platformatic/kafka"));
const dir = mkdtempSync(join(tmpdir(), "loupe-lazy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Imports the client (with the rewrite or not), counting ajv compilations, then runs a strict check. */
const PROBE = join(dir, "probe.ts");
writeFileSync(
  PROBE,
  `const [dist, mode] = process.argv.slice(2);
if (mode === "lazy") Bun.plugin((await import(${JSON.stringify(join(import.meta.dir, "../../src/kafka/lazy-validators.ts"))})).lazyValidators(true));
const { ajv } = await import(dist + "/utils.js");
let compiled = 0;
const compile = ajv.compile.bind(ajv);
ajv.compile = (schema) => (compiled++, compile(schema));
const kafka = await import(dist + "/index.js");
const atImport = compiled;
const errors = [];
for (const options of [{ sessionTimeout: -1 }, { clientId: 42 }, {}]) {
  try {
    const c = new kafka.Consumer({ clientId: "probe", bootstrapBrokers: ["127.0.0.1:9"], groupId: "g", strict: true, ...options });
    await c.close(true);
    errors.push(null);
  } catch (e) {
    errors.push(e.message);
  }
}
console.log(JSON.stringify({ atImport, afterUse: compiled, errors }));
`,
);

function probe(mode: "lazy" | "eager"): { atImport: number; afterUse: number; errors: Array<string | null> } {
  const r = Bun.spawnSync([process.execPath, PROBE, dist, mode], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  return JSON.parse(r.stdout.toString());
}

describe("the Kafka client's validators, compiled on first use", () => {
  test("24.m: the rewrite applies to every module of the pinned client that compiles validators", () => {
    const modules = ["admin", "base", "consumer", "producer"].map((c) => join(dist, "clients", c, "options.js"));
    for (const m of modules) {
      expect(VALIDATOR_MODULES.test(m)).toBe(true);
      const patched = lazyValidatorsSource(readFileSync(m, "utf8"));
      expect(patched).not.toBeNull();
      // Only the lazy helper still compiles.
      expect(patched!.split("ajv.compile(").length - 1).toBe(1);
    }
    // No other module of the client compiles validators at import.
    const others = readdirSync(join(dist, "clients"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".js"))
      .map((f) => join(dist, "clients", f))
      .filter((f) => !VALIDATOR_MODULES.test(f) && /^export const \w+ = ajv\.compile\(/m.test(readFileSync(f, "utf8")));
    expect(others).toEqual([]);
  });

  test("24.m: with the rewrite nothing compiles at import, and a strict check answers as the published client's", () => {
    const eager = probe("eager");
    const lazy = probe("lazy");
    expect(eager.atImport).toBeGreaterThan(30);
    expect(lazy.atImport).toBe(0);
    expect(lazy.afterUse).toBeGreaterThan(0);
    expect(lazy.errors).toEqual(eager.errors);
    // The invalid options are refused, the valid ones are not.
    expect(lazy.errors[0]).toContain("sessionTimeout");
    expect(lazy.errors[1]).toContain("clientId");
    expect(lazy.errors[2]).toBeNull();
  });
});
