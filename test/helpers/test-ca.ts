/**
 * A throwaway certificate authority made with openssl for a test: a root, an intermediate it
 * signs, and server certificates for localhost and 127.0.0.1 that the intermediate signs. A
 * server's certificate file carries the chain (its certificate, then the intermediate), as an
 * operator's would; a client trusts the root alone.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

function openssl(args: string[], cwd: string): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr.toString()}`);
}

export interface TestCa {
  /** The root certificate (PEM) a client trusts. */
  rootPem: string;
  rootFile: string;
  /** Makes a server certificate: `cert` holds the chain. */
  issue(name: string): { cert: string; key: string; fingerprint: string };
}

const KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

export function makeTestCa(dir: string, name: string): TestCa {
  const ext = join(dir, `${name}.ext`);
  writeFileSync(
    ext,
    `[ca]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
[server]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
`,
  );
  const root = `${name}-root`;
  const int = `${name}-int`;
  openssl(
    [
      "req",
      "-x509",
      ...KEY,
      "-keyout",
      `${root}.key`,
      "-out",
      `${root}.crt`,
      "-days",
      "2",
      "-subj",
      `/CN=${name} test root`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  openssl(["req", "-new", ...KEY, "-keyout", `${int}.key`, "-out", `${int}.csr`, "-subj", `/CN=${name} test intermediate`], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${int}.csr`,
      "-CA",
      `${root}.crt`,
      "-CAkey",
      `${root}.key`,
      "-CAcreateserial",
      "-out",
      `${int}.crt`,
      "-days",
      "2",
      "-extfile",
      ext,
      "-extensions",
      "ca",
    ],
    dir,
  );
  return {
    rootPem: readFileSync(join(dir, `${root}.crt`), "utf8"),
    rootFile: join(dir, `${root}.crt`),
    issue(server) {
      const leaf = `${name}-${server}`;
      openssl(["req", "-new", ...KEY, "-keyout", `${leaf}.key`, "-out", `${leaf}.csr`, "-subj", "/CN=localhost"], dir);
      openssl(
        [
          "x509",
          "-req",
          "-in",
          `${leaf}.csr`,
          "-CA",
          `${int}.crt`,
          "-CAkey",
          `${int}.key`,
          "-CAcreateserial",
          "-out",
          `${leaf}.crt`,
          "-days",
          "2",
          "-extfile",
          ext,
          "-extensions",
          "server",
        ],
        dir,
      );
      const chain = join(dir, `${leaf}-chain.pem`);
      writeFileSync(chain, readFileSync(join(dir, `${leaf}.crt`), "utf8") + readFileSync(join(dir, `${int}.crt`), "utf8"));
      const fp = Bun.spawnSync(["openssl", "x509", "-in", `${leaf}.crt`, "-noout", "-fingerprint", "-sha256"], {
        cwd: dir,
        stdout: "pipe",
      });
      return { cert: chain, key: join(dir, `${leaf}.key`), fingerprint: fp.stdout.toString().trim().split("=")[1] ?? "" };
    },
  };
}
