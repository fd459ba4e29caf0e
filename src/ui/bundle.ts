/**
 * The web UI's bundle: ui/main.tsx (React) and its CSS, built by Bun's bundler into /ui/main.js
 * and /ui/main.css. The executable carries them (src/ui/embedded.ts, filled by build.ts); from
 * source (npm run dev, the tests) they are built in memory on first request, once.
 */
import { mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { EMBEDDED_UI } from "./embedded.ts";

const ROOT = resolve(import.meta.dir, "../..");

/** zod's probe for `new Function`, which the browser never needs (ui/zod-config.ts sets jitless). */
const ZOD_EVAL_PROBE = 'const F = Function;\n        new F("");\n        return true;';

/**
 * The page's Content-Security-Policy allows no eval, and the UI runs zod jitless, so the bundle
 * carries no eval path at all: zod's one probe for it answers "no" without trying. The build
 * fails if the probe is not where this expects it (a zod upgrade), rather than ship it.
 */
const zodWithoutEval: import("bun").BunPlugin = {
  name: "zod-without-eval",
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]core[\\/]util\.js$/ }, async (args) => {
      const source = await Bun.file(args.path).text();
      if (!source.includes(ZOD_EVAL_PROBE)) throw new Error(`${args.path}: zod's eval probe is not where the UI build expects it`);
      return { contents: source.replace(ZOD_EVAL_PROBE, "return false;"), loader: "js" };
    });
  },
};

/** Builds the UI; with `outdir`, writes the files there too. Answers the files by URL path. */
export async function buildUi(outdir?: string): Promise<Map<string, Blob>> {
  if (outdir) mkdirSync(outdir, { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(ROOT, "ui/main.tsx")],
    target: "browser",
    minify: true,
    naming: "[name].[ext]",
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: [zodWithoutEval],
    ...(outdir ? { outdir } : {}),
  });
  if (!result.success) throw new AggregateError(result.logs, "the UI bundle did not build");
  return new Map(result.outputs.map((o) => [`/ui/${basename(o.path)}`, o as Blob]));
}

let built: Promise<Map<string, Blob>> | null = null;

/** The UI's files by URL path (/ui/...). */
export function uiBundle(): Promise<ReadonlyMap<string, Blob>> {
  if (EMBEDDED_UI) return Promise.resolve(new Map([...EMBEDDED_UI].map(([path, file]) => [path, Bun.file(file)])));
  built ??= buildUi();
  return built;
}
