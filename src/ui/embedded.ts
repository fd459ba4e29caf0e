/**
 * The UI bundle's files embedded in the executable, by path ("/ui/main.js" -> embedded file).
 * null when Loupe runs from source: then src/ui/bundle.ts builds them on first use. build.ts
 * replaces this module's text with one `with { type: "file" }` import per built file.
 */
export const EMBEDDED_UI: ReadonlyMap<string, string> | null = null;
