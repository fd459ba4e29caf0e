/**
 * Compiles the single executable `dist/loupe`: the server, its migrations (imported
 * statically) and the UI assets (embedded through src/ui/manifest.gen.ts).
 * Usage: bun build.ts [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { manifestSource } from "./scripts/gen-assets.ts";

const root = import.meta.dir;
const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const outfile = opt("--outfile") ?? join(root, "dist/loupe");
const target = opt("--target");

writeFileSync(join(root, "src/ui/manifest.gen.ts"), manifestSource());

const cmd = [process.execPath, "build", "--compile", "--minify", "--sourcemap", join(root, "src/main.ts"), "--outfile", outfile];
if (target) cmd.push("--target", target);
const started = performance.now();
const proc = Bun.spawn(cmd, { cwd: root, stdout: "inherit", stderr: "inherit" });
const code = await proc.exited;
if (code !== 0) {
  console.error(`build failed (exit ${code})`);
  process.exit(code);
}
console.log(`built ${outfile} in ${((performance.now() - started) / 1000).toFixed(1)}s`);
