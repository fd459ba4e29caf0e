// @no-services
/**
 * The release as an operator gets it: `bun build.ts --release` once for the file, the tarball
 * unpacked and installed by its install.sh into a scratch root inside a network namespace with
 * no routes (an air-gapped host), the installed unit scored by systemd-analyze, and the .deb
 * installed, removed and purged by dpkg in another scratch root; the OCI image archive read as
 * a registry would, then run by podman.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "loupe-release-"));
const out = join(dir, "dist");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
const arch = process.arch === "arm64" ? "arm64" : "x64";
const name = `loupe-${version}-linux-${arch}`;
const tree = join(dir, "unpacked", name);

function sh(cmd: string[], opts: { cwd?: string } = {}): { code: number; out: string } {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

/** Mode (octal), uid and gid of a path. */
function owned(path: string): string {
  const s = statSync(path);
  return `${(s.mode & 0o7777).toString(8).padStart(4, "0")} ${s.uid}:${s.gid}`;
}

/** The uid and gid of `loupe` in a root's own account files. */
function loupeIds(scratch: string): { uid: number; gid: number } {
  const line = readFileSync(join(scratch, "etc/passwd"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("loupe:"));
  if (!line) throw new Error(`no user loupe in ${scratch}/etc/passwd`);
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

beforeAll(async () => {
  const build = Bun.spawn([process.execPath, join(root, "build.ts"), "--release", "--out-dir", out], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, log] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`bun build.ts --release failed: ${log}`);
  mkdirSync(join(dir, "unpacked"));
  const untar = sh(["tar", "-xzf", join(out, `${name}.tar.gz`), "-C", join(dir, "unpacked")]);
  if (untar.code !== 0) throw new Error(untar.out);
}, 600_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the release", () => {
  test("the tarball holds the executable, the unit, the config, install.sh, the docs, the SBOM and the sums, which match", () => {
    for (const f of [
      "bin/loupe",
      "install.sh",
      "loupe.service",
      "loupe.toml",
      "jmx-exporter-kafka.yaml",
      "README.md",
      "docs/operations.md",
      "sbom.cdx.json",
      "SHA256SUMS",
    ])
      expect(existsSync(join(tree, f))).toBe(true);
    expect(sh([join(tree, "bin/loupe"), "--version"]).out.trim()).toBe(version);
    expect(sh(["sha256sum", "--check", "--quiet", "SHA256SUMS"], { cwd: tree }).code).toBe(0);
    expect(sh(["sha256sum", "--check", "--quiet", `${name}.tar.gz.sha256`], { cwd: out }).code).toBe(0);
    // Every file of the tree is summed.
    const summed = readFileSync(join(tree, "SHA256SUMS"), "utf8").trim().split("\n").length;
    expect(summed).toBe(readdirSync(tree, { recursive: true }).filter((f) => statSync(join(tree, String(f))).isFile()).length - 1);
  });

  test("the SBOM is CycloneDX with every production npm package, its version and licence, and no dev tool", () => {
    const bom = JSON.parse(readFileSync(join(tree, "sbom.cdx.json"), "utf8")) as {
      bomFormat: string;
      specVersion: string;
      metadata: { component: { name: string; version: string } };
      components: {
        name: string;
        group?: string;
        version: string;
        purl: string;
        licenses: { license?: { id: string }; expression?: string }[];
      }[];
    };
    expect(bom.bomFormat).toBe("CycloneDX");
    expect(bom.specVersion).toBe("1.5");
    expect(bom.metadata.component).toMatchObject({ name: "loupe", version });
    const byName = new Map(bom.components.map((c) => [c.group ? `${c.group}/${c.name}` : c.name, c]));
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const [dep, ver] of Object.entries(pkg.dependencies)) expect(byName.get(dep)?.version).toBe(ver);
    for (const dev of ["typescript", "@biomejs/biome", "playwright-core", "axe-core"]) expect(byName.has(dev)).toBe(false);
    expect(byName.get("hono")?.licenses).toEqual([{ license: { id: "MIT" } }]);
    expect(byName.get("@platformatic/kafka")?.purl).toBe(`pkg:npm/%40platformatic/kafka@${pkg.dependencies["@platformatic/kafka"]}`);
    // Transitive packages are in too, and each states a licence.
    expect(bom.components.length).toBeGreaterThan(Object.keys(pkg.dependencies).length);
    expect(bom.components.filter((c) => c.licenses.length === 0).map((c) => c.name)).toEqual([]);
  });

  test("install.sh installs offline into a scratch root: user, files, owners, modes, the unit; again keeps the config; uninstall keeps the data, purge does not", () => {
    const scratch = join(dir, "root");
    mkdirSync(scratch);
    // A network namespace of its own: no interface but a loopback that is down, no route.
    const install = () => sh(["unshare", "--net", "bash", join(tree, "install.sh"), "--root", scratch, "--no-start"]);
    const first = install();
    expect(first.code).toBe(0);
    expect(first.out).toContain("created the system user loupe");
    expect(first.out).toContain(`wrote ${scratch}/etc/loupe/loupe.toml (0640 root:loupe)`);
    // The doctor ran, and found no network: the default broker is unreachable.
    expect(first.out).toMatch(/FAIL kafka 'default': bootstrap 127\.0\.0\.1:9092/);
    expect(first.out).toMatch(/Loupe [\d.]+: http:\/\/\S+:9991\//);

    const { uid, gid } = loupeIds(scratch);
    expect(readFileSync(join(scratch, "etc/passwd"), "utf8")).toContain(`loupe:x:${uid}:${gid}::/var/lib/loupe:/usr/sbin/nologin`);
    expect(owned(join(scratch, "usr/local/bin/loupe"))).toBe("0755 0:0");
    expect(owned(join(scratch, "etc/loupe"))).toBe(`0750 0:${gid}`);
    expect(owned(join(scratch, "etc/loupe/loupe.toml"))).toBe(`0640 0:${gid}`);
    expect(owned(join(scratch, "var/lib/loupe"))).toBe(`0700 ${uid}:${gid}`);
    expect(owned(join(scratch, "etc/systemd/system/loupe.service"))).toBe("0644 0:0");
    const unit = readFileSync(join(scratch, "etc/systemd/system/loupe.service"), "utf8");
    expect(unit).toBe(readFileSync(join(tree, "loupe.service"), "utf8"));
    for (const line of [
      "UMask=0077",
      "Restart=on-failure",
      "LimitNOFILE=65536",
      "ReadWritePaths=/var/lib/loupe",
      "ProtectSystem=strict",
      "User=loupe",
    ])
      expect(unit).toContain(`\n${line}\n`);
    expect(existsSync(join(scratch, "usr/local/share/doc/loupe/operations.md"))).toBe(true);

    // systemd's own score of the installed unit.
    const security = sh(["systemd-analyze", "security", "--offline=yes", join(scratch, "etc/systemd/system/loupe.service")]);
    const exposure = Number(/Overall exposure level for loupe\.service: ([\d.]+)/.exec(security.out)?.[1]);
    console.log(`[release] systemd-analyze security exposure: ${exposure}`);
    expect(exposure).toBeLessThanOrEqual(2.0);

    // Again (an upgrade): the edited configuration stays, the user is not made twice.
    const edited = `${readFileSync(join(scratch, "etc/loupe/loupe.toml"), "utf8")}# edited by the operator\n`;
    writeFileSync(join(scratch, "etc/loupe/loupe.toml"), edited);
    const again = install();
    expect(again.code).toBe(0);
    expect(again.out).toContain(`kept ${scratch}/etc/loupe/loupe.toml`);
    expect(again.out).toContain("kept the user loupe");
    expect(readFileSync(join(scratch, "etc/loupe/loupe.toml"), "utf8")).toBe(edited);
    expect(readFileSync(join(scratch, "etc/passwd"), "utf8").match(/^loupe:/gm)).toHaveLength(1);
    expect(owned(join(scratch, "etc/loupe/loupe.toml"))).toBe(`0640 0:${gid}`);

    writeFileSync(join(scratch, "var/lib/loupe/loupe.db"), "data");
    const removed = sh(["bash", join(tree, "install.sh"), "--root", scratch, "--uninstall"]);
    expect(removed.code).toBe(0);
    expect(existsSync(join(scratch, "usr/local/bin/loupe"))).toBe(false);
    expect(existsSync(join(scratch, "etc/systemd/system/loupe.service"))).toBe(false);
    expect(readFileSync(join(scratch, "var/lib/loupe/loupe.db"), "utf8")).toBe("data");
    expect(readFileSync(join(scratch, "etc/loupe/loupe.toml"), "utf8")).toBe(edited);

    const purged = sh(["bash", join(tree, "install.sh"), "--root", scratch, "--uninstall", "--purge"]);
    expect(purged.code).toBe(0);
    expect(existsSync(join(scratch, "var/lib/loupe"))).toBe(false);
    expect(existsSync(join(scratch, "etc/loupe"))).toBe(false);
    expect(readFileSync(join(scratch, "etc/passwd"), "utf8")).not.toContain("loupe:");
  });

  test("the .deb installs, removes (keeping config and data) and purges cleanly with dpkg into a scratch root", () => {
    const scratch = join(dir, "deb-root");
    mkdirSync(join(scratch, "var/lib/dpkg/info"), { recursive: true });
    mkdirSync(join(scratch, "var/lib/dpkg/updates"));
    writeFileSync(join(scratch, "var/lib/dpkg/status"), "");
    mkdirSync(join(scratch, "etc"));
    writeFileSync(join(scratch, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    writeFileSync(join(scratch, "etc/group"), "root:x:0:\n");
    writeFileSync(join(scratch, "etc/shadow"), "root:*:1::::::\n", { mode: 0o600 });
    writeFileSync(join(scratch, "etc/gshadow"), "root:*::\n", { mode: 0o600 });
    const deb = join(out, `loupe_${version}_${arch === "x64" ? "amd64" : "arm64"}.deb`);
    // The scratch root has no libc6 or passwd package to satisfy Depends; the scripts run from the host, with DPKG_ROOT.
    const dpkg = (...args: string[]) => sh(["dpkg", `--root=${scratch}`, "--force-script-chrootless", "--force-depends", ...args]);

    const installed = dpkg("-i", deb);
    expect(installed.code).toBe(0);
    const { uid, gid } = loupeIds(scratch);
    expect(owned(join(scratch, "usr/bin/loupe"))).toBe("0755 0:0");
    expect(owned(join(scratch, "etc/loupe/loupe.toml"))).toBe(`0640 0:${gid}`);
    expect(owned(join(scratch, "var/lib/loupe"))).toBe(`0700 ${uid}:${gid}`);
    const unit = readFileSync(join(scratch, "lib/systemd/system/loupe.service"), "utf8");
    expect(unit).toContain("\nExecStart=/usr/bin/loupe serve\n");
    expect(unit).not.toContain("/usr/local/");
    expect(existsSync(join(scratch, "usr/share/doc/loupe/sbom.cdx.json"))).toBe(true);
    expect(sh(["dpkg-query", `--root=${scratch}`, "-W", "-f=${Status} ${Version}", "loupe"]).out).toBe(`install ok installed ${version}`);

    writeFileSync(join(scratch, "var/lib/loupe/loupe.db"), "data");
    expect(dpkg("-r", "loupe").code).toBe(0);
    expect(existsSync(join(scratch, "usr/bin/loupe"))).toBe(false);
    expect(existsSync(join(scratch, "lib/systemd/system/loupe.service"))).toBe(false);
    expect(existsSync(join(scratch, "etc/loupe/loupe.toml"))).toBe(true);
    expect(readFileSync(join(scratch, "var/lib/loupe/loupe.db"), "utf8")).toBe("data");

    expect(dpkg("-P", "loupe").code).toBe(0);
    expect(existsSync(join(scratch, "etc/loupe"))).toBe(false);
    expect(existsSync(join(scratch, "var/lib/loupe"))).toBe(false);
    expect(readFileSync(join(scratch, "etc/passwd"), "utf8")).not.toContain("loupe:");
    expect(sh(["dpkg-query", `--root=${scratch}`, "-W", "loupe"]).code).not.toBe(0);
  });

  test("the OCI image archive holds one layer: the executable, its C library and the non-root user; podman runs it", () => {
    const archive = join(out, `${name}-oci.tar`);
    expect(sh(["sha256sum", "--check", "--quiet", `${name}-oci.tar.sha256`], { cwd: out }).code).toBe(0);
    const layout = join(dir, "oci");
    mkdirSync(layout);
    expect(sh(["tar", "-xf", archive, "-C", layout]).code).toBe(0);
    const blob = (digest: string) => {
      const bytes = readFileSync(join(layout, "blobs/sha256", digest.slice("sha256:".length)));
      // Content-addressed: every blob is what its name says.
      expect(`sha256:${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}`).toBe(digest);
      return bytes;
    };
    expect(JSON.parse(readFileSync(join(layout, "oci-layout"), "utf8"))).toEqual({ imageLayoutVersion: "1.0.0" });
    const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as {
      manifests: { digest: string; annotations: Record<string, string> }[];
    };
    expect(index.manifests[0]!.annotations["org.opencontainers.image.ref.name"]).toBe(`loupe:${version}`);
    const manifest = JSON.parse(blob(index.manifests[0]!.digest).toString()) as {
      config: { digest: string };
      layers: { digest: string; mediaType: string }[];
    };
    const config = JSON.parse(blob(manifest.config.digest).toString()) as {
      config: { User: string; Entrypoint: string[] };
      rootfs: { diff_ids: string[] };
    };
    expect(config.config.User).toBe("10001:10001");
    expect(config.config.Entrypoint).toEqual(["/usr/local/bin/loupe"]);
    expect(manifest.layers).toHaveLength(1);
    const layer = Bun.gunzipSync(blob(manifest.layers[0]!.digest));
    expect(`sha256:${new Bun.CryptoHasher("sha256").update(layer).digest("hex")}`).toBe(config.rootfs.diff_ids[0]!);
    writeFileSync(join(dir, "layer.tar"), layer);
    const listing = sh(["tar", "-tvf", join(dir, "layer.tar"), "--numeric-owner"]).out;
    const files = listing
      .split("\n")
      .filter((l) => l.startsWith("-"))
      .map((l) => l.split(/\s+/).at(-1));
    expect(files).toContain("usr/local/bin/loupe");
    expect(files).toContain("etc/passwd");
    // Besides those: the shared objects ldd names (the C library and its loader), nothing else.
    expect(
      files.filter((f) => !["usr/local/bin/loupe", "etc/passwd", "etc/group"].includes(f!)).every((f) => /\.so(\.\d+)*$/.test(f!)),
    ).toBe(true);
    expect(listing).toMatch(/^drwx------ 10001\/10001 .* var\/lib\/loupe\/$/m);

    // podman (Debian's) with runc: crun refuses this host's hybrid cgroups, and the limits are
    // set below the host's, which a container may not raise.
    if (!Bun.which("podman") || !Bun.which("runc")) throw new Error("podman and runc are needed: apt-get install podman runc");
    const run = Bun.spawnSync(
      [
        "podman",
        "--runtime",
        "runc",
        "--cgroup-manager",
        "cgroupfs",
        "run",
        "--rm",
        "--network=none",
        "--ulimit",
        "nofile=1024:1024",
        "--ulimit",
        "nproc=1024:1024",
        `oci-archive:${archive}`,
        "--version",
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(run.stdout.toString().trim()).toBe(version);
    expect(run.exitCode).toBe(0);
    sh(["podman", "rmi", "-f", `localhost/loupe:${version}`]);
  });
});
