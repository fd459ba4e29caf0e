/**
 * Compiles the single executable `dist/loupe`: the server, its migrations (imported
 * statically), the UI assets (embedded through src/ui/manifest.gen.ts) and the UI bundle
 * (ui/, built first into dist/ui and embedded through src/ui/embedded.ts).
 * Usage: bun build.ts [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64] [--release [--out-dir DIR]]
 * --release then makes the release of that executable under DIR (dist/ by default): the
 * tarball, its checksum and the .deb (scripts/release.ts, docs/operations.md).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BunPlugin } from "bun";
import { manifestSource } from "./scripts/gen-assets.ts";
import { lazyValidators } from "./src/kafka/lazy-validators.ts";
import { buildUi } from "./src/ui/bundle.ts";

const root = import.meta.dir;
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const release = args.includes("--release");
const outDir = opt("--out-dir") ?? join(root, "dist");
const outfile = opt("--outfile") ?? join(release ? outDir : join(root, "dist"), "loupe");
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

// The UI first: its files in dist/ui, then src/ui/embedded.ts as one file import per file.
const uiDir = join(root, "dist/ui");
const uiFiles = [...(await buildUi(uiDir)).keys()];
const embedUi: BunPlugin = {
  name: "embed-ui-bundle",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]ui[\\/]embedded\.ts$/ }, () => {
      const imports = uiFiles.map(
        (p, i) => `import u${i} from ${JSON.stringify(join(uiDir, p.slice("/ui/".length)))} with { type: "file" };`,
      );
      const entries = uiFiles.map((p, i) => `[${JSON.stringify(p)}, u${i}]`).join(", ");
      return { contents: `${imports.join("\n")}\nexport const EMBEDDED_UI = new Map([${entries}]);\n`, loader: "ts" };
    });
  },
};

const result = await Bun.build({
  entrypoints: [join(root, "src/main.ts")],
  compile: { outfile, target },
  minify: true,
  // Compiled ahead to JavaScriptCore bytecode: the executable starts without parsing its source
  // (`--version` in some 50 ms instead of 0.3 s; some 8 MB more on disk).
  bytecode: true,
  sourcemap: "linked",
  // The Kafka client's option validators compile on first use (see lazy-validators.ts).
  plugins: [embedWasm, embedUi, lazyValidators(true)],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  console.error("build failed");
  process.exit(1);
}
console.log(`built ${outfile} in ${((performance.now() - started) / 1000).toFixed(1)}s`);

if (release) {
  const { makeRelease } = await import("./scripts/release.ts");
  const { VERSION } = await import("./src/version.ts");
  const made = await makeRelease({ root, exe: outfile, version: VERSION, arch: target === "bun-linux-arm64" ? "arm64" : "x64", outDir });
  console.log(
    `release ${made.tarball}\npackage ${made.deb}\nimage ${made.oci ?? "none: the OCI image is built on a host of its architecture"}`,
  );
}
