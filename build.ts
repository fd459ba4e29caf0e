/**
 * Compiles the single executable `dist/loupe`: the server, its migrations (imported
 * statically) and the UI assets (embedded through src/ui/manifest.gen.ts).
 * Usage: bun build.ts [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BunPlugin } from "bun";
import { manifestSource } from "./scripts/gen-assets.ts";

const root = import.meta.dir;
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const outfile = opt("--outfile") ?? join(root, "dist/loupe");
const target = (opt("--target") ?? `bun-linux-${process.arch === "arm64" ? "arm64" : "x64"}`) as "bun-linux-x64" | "bun-linux-arm64";

writeFileSync(join(root, "src/ui/manifest.gen.ts"), manifestSource());

/**
 * The Kafka client's CRC32C/LZ4/Snappy helpers read `native.wasm` beside their module at
 * import time, a path that does not exist inside the executable. Import the file instead,
 * so the compiler embeds it and hands back its embedded path.
 */
const embedWasm: BunPlugin = {
  name: "embed-kafka-wasm",
  setup(build) {
    build.onLoad({ filter: /@platformatic[\\/]wasm-utils[\\/]dist[\\/]index\.js$/ }, async (argsLoad) => {
      const source = await Bun.file(argsLoad.path).text();
      const needle = "readFileSync(new URL('../dist/native.wasm', import.meta.url))";
      if (!source.includes(needle)) throw new Error(`${argsLoad.path} no longer loads native.wasm as expected`);
      const patched =
        `import __nativeWasmPath from "./native.wasm" with { type: "file" };\n` + source.replace(needle, "readFileSync(__nativeWasmPath)");
      return { contents: patched, loader: "js" };
    });
  },
};

const started = performance.now();
const result = await Bun.build({
  entrypoints: [join(root, "src/main.ts")],
  compile: { outfile, target },
  minify: true,
  sourcemap: "linked",
  plugins: [embedWasm],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  console.error("build failed");
  process.exit(1);
}
console.log(`built ${outfile} in ${((performance.now() - started) / 1000).toFixed(1)}s`);
