/**
 * The Kafka client compiles some forty JSON-schema validators of its options (ajv) when it is
 * imported: a third of a second and some 30 MB of resident memory at every start, for checks
 * that run only with its `strict` option, which Loupe leaves off (so they never run). This
 * rewrites its four options modules as they load so that each validator is compiled on its
 * first call instead: same checks, same `errors`, when anything asks for them.
 *
 * Applied by the executable's build (build.ts) and, for `bun src/main.ts`, by a runtime plugin
 * that main.ts registers before it imports the server. Without it (tests that import src/
 * directly) the client compiles them eagerly, as published. test/kafka/lazy-validators.test.ts
 * checks the rewrite against the pinned client.
 */

import type { BunPlugin } from "bun";

/** The client's modules that compile validators at import. */
export const VALIDATOR_MODULES = /@platformatic[\\/]kafka[\\/]dist[\\/]clients[\\/](admin|base|consumer|producer)[\\/]options\.js$/;

const NEEDLE = "ajv.compile(";

/**
 * A function that compiles `schema` on its first call and validates with it, with the compiled
 * validator's `errors` of its last call (what the client reads after a failed check).
 */
const LAZY_COMPILE = `
function __loupeLazyCompile(schema) {
  let compiled = null;
  const validate = (data) => {
    compiled ??= ajv.compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null;
  return validate;
}
`;

/** The module's source with its validators compiled lazily; null when it compiles none as expected. */
export function lazyValidatorsSource(source: string): string | null {
  if (!source.includes(NEEDLE) || !/import \{[^}]*\bajv\b[^}]*\} from "\.\.\/\.\.\/utils\.js"/.test(source)) return null;
  return `${source.replaceAll(NEEDLE, "__loupeLazyCompile(")}\n${LAZY_COMPILE}`;
}

/**
 * The rewrite as a Bun plugin. `strict`: a module that no longer matches fails the load (the
 * build says so); otherwise it loads as published.
 */
export function lazyValidators(strict: boolean): BunPlugin {
  return {
    name: "kafka-lazy-validators",
    setup(build) {
      build.onLoad({ filter: VALIDATOR_MODULES }, async (args) => {
        const source = await Bun.file(args.path).text();
        const patched = lazyValidatorsSource(source);
        if (patched === null && strict) throw new Error(`${args.path} no longer compiles its validators as expected`);
        return { contents: patched ?? source, loader: "js" };
      });
    },
  };
}
