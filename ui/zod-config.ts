/**
 * Imported first by main.tsx, before any schema is built: zod compiles object parsers with
 * `new Function` unless told not to, and the page's Content-Security-Policy (no 'unsafe-eval')
 * reports even the probe it catches as a console error. The shared request schemas are parsed a
 * few times per form submit, where the compiled fast path buys nothing.
 */
import { config } from "zod";

config({ jitless: true });
