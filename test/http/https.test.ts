/**
 * HTTPS on Loupe's own port (issue 27): the server process with `server.tls`, reached by curl and
 * by Bun's fetch trusting a test root only (the certificate file carries the intermediate); TLS
 * 1.1 refused; HSTS; the plain HTTP port that only redirects; a new certificate on SIGHUP while
 * an event stream stays open.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../cluster/cluster.ts";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.ts";
import { makeTestCa, type TestCa } from "../helpers/test-ca.ts";
import { waitFor } from "../helpers/wait.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-https-"));
let first: TestCa;
let second: TestCa;
let server: ServerProcess;
let redirectPort: number;
/** The files the config names; a reload copies other certificates over them. */
const certFile = join(dir, "server.pem");
const keyFile = join(dir, "server.key");

beforeAll(async () => {
  first = makeTestCa(dir, "first");
  second = makeTestCa(dir, "second");
  const issued = first.issue("a");
  copyFileSync(issued.cert, certFile);
  copyFileSync(issued.key, keyFile);
  redirectPort = await freePort();
  server = await startServerProcess(
    { server: { tls: { cert: certFile, key: keyFile, redirectPort, hstsMaxAge: "180d" } } },
    { ca: first.rootPem },
  );
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function curl(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync(["curl", "-sS", "--max-time", "10", ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** The SHA-256 fingerprint of the certificate a new TLS connection gets. */
function servedFingerprint(): string {
  const port = new URL(server.url).port;
  const r = Bun.spawnSync(
    [
      "sh",
      "-c",
      `openssl s_client -connect 127.0.0.1:${port} -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256`,
    ],
    {
      stdout: "pipe",
    },
  );
  return r.stdout.toString().trim().split("=")[1] ?? "";
}

describe("27: HTTPS on Loupe's port", () => {
  test("27: check-config reads the certificate files: a missing one is named, with exit 2", () => {
    const config = join(dir, "missing.toml");
    writeFileSync(config, `[server.tls]\ncert = ${JSON.stringify(join(dir, "nope.pem"))}\nkey = ${JSON.stringify(keyFile)}\n`);
    const r = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/main.ts"), "check-config", "--config", config], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.toString()).toContain(`server.tls.cert: cannot read ${join(dir, "nope.pem")}`);
  });

  test("27: curl trusting the test root reads the API over HTTPS, with HSTS; no root, no answer", () => {
    const ok = curl(["--cacert", first.rootFile, "-D", "-", "-o", "/dev/null", `${server.url}/api/health`]);
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/^HTTP\/[\d.]+ 200/);
    expect(ok.stdout.toLowerCase()).toContain(`strict-transport-security: max-age=${180 * 86_400}`);
    const untrusted = curl(["-o", "/dev/null", `${server.url}/api/health`]);
    expect(untrusted.code).toBe(60); // curl: peer certificate cannot be authenticated
  });

  test("27: TLS 1.2 and 1.3 are served, TLS 1.1 is refused", () => {
    const port = new URL(server.url).port;
    for (const [flag, want] of [
      ["--tlsv1.2", true],
      ["--tlsv1.3", true],
    ] as const) {
      const r = curl([flag, "--cacert", first.rootFile, "-o", "/dev/null", "-w", "%{http_code}", `${server.url}/api/health`]);
      expect({ flag, ok: r.stdout === "200" }).toEqual({ flag, ok: want });
    }
    const old = Bun.spawnSync(["sh", "-c", `openssl s_client -connect 127.0.0.1:${port} -tls1_1 </dev/null 2>&1`], { stdout: "pipe" });
    const out = old.stdout.toString();
    expect(out).toContain("Cipher is (NONE)");
  });

  test("27: the plain HTTP port answers 308 to the same path and query over HTTPS, and serves nothing", async () => {
    const res = await fetch(`http://localhost:${redirectPort}/api/topics?q=a%20b`, { redirect: "manual" });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe(`${server.url}/api/topics?q=a%20b`);
    expect(await res.text()).toBe("");
    const post = await fetch(`http://127.0.0.1:${redirectPort}/api/login`, { method: "POST", body: "{}", redirect: "manual" });
    expect(post.status).toBe(308);
    expect(post.headers.get("location")).toBe(`https://127.0.0.1:${new URL(server.url).port}/api/login`);
  });

  test("27: SIGHUP with a new certificate: an open event stream keeps receiving, new connections get the new certificate", async () => {
    const before = servedFingerprint();
    expect(before).toBe(
      Bun.spawnSync(["openssl", "x509", "-in", certFile, "-noout", "-fingerprint", "-sha256"]).stdout.toString().trim().split("=")[1] ??
        "x",
    );
    const admin = await server.token("admin");
    const stream = await fetch(`${server.url}/api/sse/audit`, { headers: { "x-service-token": admin }, tls: { ca: first.rootPem } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let received = "";
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        received += new TextDecoder().decode(value);
      }
    })();
    /** A denied read is audited: the stream shows its entry. */
    const denied = async (tag: string) => {
      const res = await server.request(`/api/audit?limit=1&tag=${tag}`, { role: "write" });
      expect(res.status).toBe(403);
    };
    await denied("before");
    const denials = () => received.split('"DENY"').length - 1;
    await waitFor(() => denials() >= 1);

    const issued = second.issue("b");
    copyFileSync(issued.cert, certFile);
    copyFileSync(issued.key, keyFile);
    process.kill(server.pid, "SIGHUP");
    await waitFor(() => servedFingerprint() === issued.fingerprint);
    // The new certificate only: a client trusting the first root alone is refused now.
    expect(curl(["--cacert", second.rootFile, "-o", "/dev/null", "-w", "%{http_code}", `${server.url}/api/health`]).stdout).toBe("200");
    expect(curl(["--cacert", first.rootFile, "-o", "/dev/null", `${server.url}/api/health`]).code).toBe(60);

    // The stream opened before the reload still receives.
    const after = await fetch(`${server.url}/api/audit?limit=1&tag=after`, {
      headers: { "x-service-token": await server.token("write") },
      tls: { ca: second.rootPem },
    });
    expect(after.status).toBe(403);
    await waitFor(() => denials() >= 2);
    await reader.cancel();
    await reading.catch(() => {});
  });
  test("27: SIGHUP with a broken certificate file: the server serves on, and the next good file is taken", async () => {
    writeFileSync(certFile, "-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n");
    process.kill(server.pid, "SIGHUP");
    // Signals are handled in order: once the good file of the next SIGHUP is served, the broken
    // one was handled, and neither stopped the server nor wedged its reloads.
    const issued = first.issue("c");
    copyFileSync(issued.cert, certFile);
    copyFileSync(issued.key, keyFile);
    process.kill(server.pid, "SIGHUP");
    await waitFor(() => servedFingerprint() === issued.fingerprint);
    expect(curl(["--cacert", first.rootFile, "-o", "/dev/null", "-w", "%{http_code}", `${server.url}/api/health`]).stdout).toBe("200");
  });
  test("27: SIGTERM over HTTPS: a stream held by a listener a reload replaced still gets its final line, and the process ends", async () => {
    const admin = await server.token("admin");
    const stream = await fetch(`${server.url}/api/sse/audit`, { headers: { "x-service-token": admin }, tls: { ca: first.rootPem } });
    expect(stream.status).toBe(200);
    const text = stream.text();
    const issued = second.issue("d");
    copyFileSync(issued.cert, certFile);
    copyFileSync(issued.key, keyFile);
    process.kill(server.pid, "SIGHUP");
    await waitFor(() => servedFingerprint() === issued.fingerprint);
    process.kill(server.pid, "SIGTERM");
    const lines = (await text).split("\n").filter((l) => l !== "");
    expect(lines.at(-1)).toBe("data:");
    const gone = await waitFor(() => {
      try {
        process.kill(server.pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    expect(gone).toBe(true);
  });
});
