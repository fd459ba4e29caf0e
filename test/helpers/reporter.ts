/**
 * A small program of the test's run in a process of its own (`bun -e`), reporting one line at a
 * time on its stdout: the machine-lag probe, the server poller. It writes "ready" first;
 * `startReporter` resolves once it has, and fails if the program ends before.
 */
import type { Subprocess } from "bun";

export interface Reporter {
  /** Resolves once the program has ended and every line it wrote was handed on. */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

export async function startReporter(program: string, args: string[], onLine: (line: string) => void): Promise<Reporter> {
  const child: Subprocess<"ignore", "pipe", "inherit"> = Bun.spawn([process.execPath, "-e", program, ...args], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  let ready!: () => void;
  const started = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const done = (async () => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of child.stdout) {
      rest += decoder.decode(chunk, { stream: true });
      for (let nl = rest.indexOf("\n"); nl >= 0; nl = rest.indexOf("\n")) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        if (line === "ready") ready();
        else onLine(line);
      }
    }
  })();
  await Promise.race([
    started,
    done.then(() => Promise.reject(new Error("the reporting process ended before it was ready (see its error above)"))),
  ]);
  return {
    done,
    async stop() {
      child.kill();
      await child.exited;
      await done;
    },
  };
}
