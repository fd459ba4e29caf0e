/**
 * The web UI's bundle: ui/main.tsx (React) and its CSS, built by Bun's bundler into /ui/main.js
 * and /ui/main.css. The executable carries them (src/ui/embedded.ts, filled by build.ts); from
 * source (npm run dev, the tests) they are built in memory on first request, once.
 */
import { mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { EMBEDDED_UI } from "./embedded.ts";

const ROOT = resolve(import.meta.dir, "../..");

/** Builds the UI; with `outdir`, writes the files there too. Answers the files by URL path. */
export async function buildUi(outdir?: string): Promise<Map<string, Blob>> {
  if (outdir) mkdirSync(outdir, { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(ROOT, "ui/main.tsx")],
    target: "browser",
    minify: true,
    naming: "[name].[ext]",
    define: { "process.env.NODE_ENV": '"production"' },
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
