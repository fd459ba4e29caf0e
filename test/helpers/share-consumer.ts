/**
 * A real Kafka share consumer (Kafka's own KafkaShareConsumer, ShareConsumer.java beside this
 * file) run as a child process with the test broker's jars: what the share-group tests observe
 * through Loupe. The one source file is compiled once into .cache (keyed by its content), which
 * saves the second or two Java's source launcher would spend compiling at every start.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CACHE_DIR, javaBin, kafkaLibsDir } from "../cluster/cluster.ts";
import { waitFor } from "./wait.ts";

const SOURCE = join(import.meta.dir, "ShareConsumer.java");

/** The directory holding ShareConsumer.class, compiled on first use; null: run the source instead. */
function compiled(): string | null {
  const hash = createHash("sha256").update(readFileSync(SOURCE)).digest("hex").slice(0, 12);
  const dir = join(CACHE_DIR, `share-consumer-${hash}`);
  if (existsSync(join(dir, "ShareConsumer.class"))) return dir;
  const javac = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, "bin", "javac") : "javac";
  const tmp = mkdtempSync(join(CACHE_DIR, "share-consumer-build-"));
  const out = Bun.spawnSync([javac, "-cp", `${kafkaLibsDir()}/*`, "-d", tmp, SOURCE], { stderr: "pipe" });
  try {
    if (out.exitCode !== 0) return null;
    // Another test process may have compiled it meanwhile: either copy is the same.
    if (!existsSync(dir)) renameSync(tmp, dir);
    return dir;
  } catch {
    return existsSync(join(dir, "ShareConsumer.class")) ? dir : null;
  } finally {
    if (existsSync(tmp)) rmSync(tmp, { recursive: true, force: true });
  }
}

export interface ShareConsumerProcess {
  /** Records read (and acknowledged) so far. */
  readonly records: () => number;
  /** Resolves once the consumer has polled (joined its group). */
  joined(): Promise<void>;
  /** Leaves the group (closing its standard input) and waits for the process to end. */
  stop(): Promise<void>;
}

export function startShareConsumer(opts: { bootstrap: string; group: string; topic: string; clientId: string }): ShareConsumerProcess {
  const classes = compiled();
  const classpath = classes ? `${classes}:${kafkaLibsDir()}/*` : `${kafkaLibsDir()}/*`;
  const proc = Bun.spawn(
    [
      javaBin(),
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-Xmx96m",
      "-cp",
      classpath,
      classes ? "ShareConsumer" : SOURCE,
      opts.bootstrap,
      opts.group,
      opts.topic,
      opts.clientId,
    ],
    { stdin: "pipe", stdout: "pipe", stderr: "pipe" },
  );
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  void pump(proc.stdout, (s) => (out += s));
  void pump(proc.stderr, (s) => (err += s));
  const failed = () => (proc.exitCode !== null ? new Error(`share consumer exited ${proc.exitCode}: ${err.slice(-2000)}`) : null);
  return {
    records: () => Math.max(0, ...[...out.matchAll(/^records (\d+)$/gm)].map((m) => Number(m[1]))),
    async joined() {
      await waitFor(
        () => {
          const f = failed();
          if (f) throw f;
          return out.includes("joined");
        },
        { timeoutMs: 30_000, what: "the share consumer's first poll" },
      );
    },
    async stop() {
      if (proc.exitCode === null) {
        proc.stdin.end();
        const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => null)]);
        if (exited === null) proc.kill("SIGKILL");
      }
      await proc.exited;
    },
  };
}
