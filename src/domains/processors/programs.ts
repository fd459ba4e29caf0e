/**
 * Each processor's compiled program, compiled once and kept with the processor: the creation's
 * compile (checked against the cluster's topics and the creator's rights) is the one kept, and a
 * processor read from the store that this instance has not compiled yet (created by another
 * instance, or before a restart) is compiled when it is first used. Runners (each start and each
 * restart after a failure) and the API's answers use the kept program.
 *
 * NOW() in a program stands for when it was compiled: its creation, or when this instance first
 * loaded it.
 */
import { type Catalog, compileStream, SqlError, type StreamOptions, type StreamProgram } from "../../sql/index.ts";

/** How a program is compiled (the SQL layer's compileStream; a test counts or replaces it). */
export type StreamCompiler = (sql: string, catalog?: Catalog | null, options?: StreamOptions) => StreamProgram;

/**
 * The stored program no longer compiles (a bound added since it was created, such as the windows
 * per record): retrying cannot help, so its runners fail at once.
 */
export class InvalidProgramError extends Error {
  override name = "InvalidProgramError";
}

interface Kept {
  sql: string;
  program: StreamProgram | InvalidProgramError;
}

export class ProcessorPrograms {
  readonly #compiler: StreamCompiler;
  readonly #kept = new Map<string, Kept>();
  #compilations = 0;

  constructor(compiler: StreamCompiler = compileStream) {
    this.#compiler = compiler;
  }

  /** Programs compiled since this instance started (creations, validations and loads). */
  get compilations(): number {
    return this.#compilations;
  }

  /** Compiles a program (a creation checks it with the catalog and the caller's rights); SqlError when invalid. */
  compile(sql: string, catalog?: Catalog | null, options?: StreamOptions): StreamProgram {
    this.#compilations++;
    return this.#compiler(sql, catalog, options);
  }

  /** Keeps a created processor's program: it is not compiled again on this instance. */
  keep(id: string, sql: string, program: StreamProgram): void {
    this.#kept.set(id, { sql, program });
  }

  /** The processor's program; compiled when first used here. InvalidProgramError when it no longer compiles. */
  of(p: { id: string; sql: string }): StreamProgram {
    const program = this.#load(p);
    if (program instanceof InvalidProgramError) throw program;
    return program;
  }

  /** The processor's program, or null when it no longer compiles (an answer then shows the defaults). */
  peek(p: { id: string; sql: string }): StreamProgram | null {
    const program = this.#load(p);
    return program instanceof InvalidProgramError ? null : program;
  }

  /** Drops a deleted processor's program. */
  forget(id: string): void {
    this.#kept.delete(id);
  }

  #load(p: { id: string; sql: string }): StreamProgram | InvalidProgramError {
    const kept = this.#kept.get(p.id);
    // A processor's text does not change; a kept program of another text is of an id reused.
    if (kept !== undefined && kept.sql === p.sql) return kept.program;
    let program: StreamProgram | InvalidProgramError;
    try {
      program = this.compile(p.sql);
    } catch (err) {
      if (!(err instanceof SqlError)) throw err;
      program = new InvalidProgramError(`The program is no longer valid: ${err.message}`);
    }
    this.#kept.set(p.id, { sql: p.sql, program });
    return program;
  }
}
