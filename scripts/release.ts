/**
 * The release of one compiled executable (`bun build.ts --release`): a versioned tarball and a
 * Debian package under `dist/`, made of files this checkout already holds.
 *
 * The tarball `loupe-<version>-linux-<arch>.tar.gz` unpacks into one directory:
 *   bin/loupe          the executable
 *   install.sh         installs from this directory, offline (docs/operations.md)
 *   loupe.service      the hardened systemd unit
 *   loupe.toml         the commented default configuration
 *   docs/, README.md   the documentation
 *   sbom.cdx.json      CycloneDX SBOM: the npm packages inside, with versions and licences
 *   SHA256SUMS         of every file above (install.sh checks them)
 * with `<tarball>.sha256` beside it. The package `loupe_<version>_<debarch>.deb` holds the same
 * files at Debian's places (/usr/bin, /lib/systemd/system, /etc/loupe as a conffile,
 * /usr/share/doc/loupe); its maintainer scripts do what install.sh does, and honour DPKG_ROOT.
 * The OCI image archive `loupe-<version>-linux-<arch>-oci.tar` (an OCI image layout in a tar,
 * for `podman load` or `skopeo copy oci-archive:...`) is written here without any container
 * tool: one layer with the executable, the C library it links, and the non-root user `loupe`.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";

export interface ReleaseOptions {
  /** The checkout. */
  root: string;
  /** The compiled executable. */
  exe: string;
  version: string;
  arch: "x64" | "arm64";
  /** Where the tarball and the package go. */
  outDir: string;
}

export interface Release {
  tarball: string;
  deb: string;
  /** None for another architecture's executable: the image takes the C library from this host. */
  oci?: string;
  /** The unpacked tree the tarball was made of. */
  tree: string;
}

export async function makeRelease(o: ReleaseOptions): Promise<Release> {
  const name = `loupe-${o.version}-linux-${o.arch}`;
  const staging = join(o.outDir, "release");
  rmSync(staging, { recursive: true, force: true });
  const tree = join(staging, name);
  mkdirSync(join(tree, "bin"), { recursive: true });
  cpSync(o.exe, join(tree, "bin/loupe"));
  chmodSync(join(tree, "bin/loupe"), 0o755);
  cpSync(join(o.root, "install.sh"), join(tree, "install.sh"));
  chmodSync(join(tree, "install.sh"), 0o755);
  cpSync(join(o.root, "deploy/loupe.service"), join(tree, "loupe.service"));
  cpSync(join(o.root, "deploy/loupe.toml"), join(tree, "loupe.toml"));
  // The JMX exporter's rules for the brokers, naming the series Loupe reads (docs/alerts.md).
  cpSync(join(o.root, "deploy/jmx-exporter-kafka.yaml"), join(tree, "jmx-exporter-kafka.yaml"));
  cpSync(join(o.root, "README.md"), join(tree, "README.md"));
  mkdirSync(join(tree, "docs"));
  for (const f of readdirSync(join(o.root, "docs")).filter((f) => f.endsWith(".md")))
    cpSync(join(o.root, "docs", f), join(tree, "docs", f));
  writeFileSync(join(tree, "sbom.cdx.json"), `${JSON.stringify(sbom(o.root, o.version), null, 2)}\n`);
  writeFileSync(join(tree, "SHA256SUMS"), sha256Sums(tree));

  const tarball = join(o.outDir, `${name}.tar.gz`);
  await run(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "-czf", tarball, "-C", staging, name]);
  writeFileSync(`${tarball}.sha256`, `${sha256(tarball)}  ${name}.tar.gz\n`);
  const deb = await makeDeb(o, tree, staging);
  const hostArch = process.arch === "arm64" ? "arm64" : "x64";
  const oci = o.arch === hostArch ? await makeOci(o, tree) : undefined;
  return { tarball, deb, tree, ...(oci ? { oci } : {}) };
}

/** `sha256sum` format, every file under `dir` but the sums themselves, by path. */
function sha256Sums(dir: string): string {
  return filesUnder(dir)
    .filter((f) => f !== "SHA256SUMS")
    .map((f) => `${sha256(join(dir, f))}  ${f}\n`)
    .join("");
}

function filesUnder(dir: string, base = dir): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f), base) : [relative(base, join(dir, f))]));
}

function sha256(path: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
}

async function run(cmd: string[]): Promise<void> {
  const p = Bun.spawn(cmd, { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed`);
}

interface PackageJson {
  name: string;
  version: string;
  license?: string | { type?: string };
  licenses?: { type?: string }[];
  description?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

interface Installed {
  dir: string;
  pkg: PackageJson;
}

/**
 * The production dependency tree as installed: from package.json's `dependencies`, each package
 * resolved as Node does (its own node_modules first, then each parent's), then theirs. Optional
 * and peer dependencies count when installed. Dev dependencies are not inside the executable.
 */
export function productionPackages(root: string): Installed[] {
  const found = new Map<string, Installed>();
  const visit = (fromDir: string, deps: string[]) => {
    for (const dep of deps) {
      const dir = resolvePackage(root, fromDir, dep);
      if (!dir || found.has(dir)) continue;
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
      found.set(dir, { dir, pkg });
      visit(dir, [
        ...Object.keys(pkg.dependencies ?? {}),
        ...Object.keys(pkg.optionalDependencies ?? {}),
        ...Object.keys(pkg.peerDependencies ?? {}),
      ]);
    }
  };
  const top = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  visit(root, Object.keys(top.dependencies ?? {}));
  return [...found.values()].sort((a, b) => a.pkg.name.localeCompare(b.pkg.name) || a.pkg.version.localeCompare(b.pkg.version));
}

function resolvePackage(root: string, fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === root || dir === dirname(dir)) return undefined;
  }
}

/** The licence as package.json states it (an SPDX id or expression), the old `licenses` array included. */
function licenceOf(pkg: PackageJson): string | undefined {
  if (typeof pkg.license === "string") return pkg.license;
  if (pkg.license?.type) return pkg.license.type;
  const old = (pkg.licenses ?? []).map((l) => l.type).filter(Boolean);
  return old.length ? old.join(" OR ") : undefined;
}

function purl(name: string, version: string): string {
  const [scope, bare] = name.startsWith("@") ? (name.split("/") as [string, string]) : [undefined, name];
  return `pkg:npm/${scope ? `${encodeURIComponent(scope)}/` : ""}${bare}@${version}`;
}

/** CycloneDX 1.5: Loupe, the Bun runtime compiled into it, and every production npm package. */
export function sbom(root: string, version: string): object {
  const component = (name: string, ver: string, licence: string | undefined, description?: string) => {
    const [group, bare] = name.startsWith("@") ? (name.split("/") as [string, string]) : [undefined, name];
    return {
      type: "library",
      "bom-ref": purl(name, ver),
      ...(group ? { group } : {}),
      name: bare,
      version: ver,
      ...(description ? { description } : {}),
      purl: purl(name, ver),
      licenses: !licence
        ? []
        : /\s(OR|AND|WITH)\s/.test(licence) || licence.startsWith("(")
          ? [{ expression: licence }]
          : [{ license: { id: licence } }],
    };
  };
  const packages = productionPackages(root);
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    serialNumber: `urn:uuid:${crypto.randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: new Date().toISOString(),
      tools: { components: [{ type: "application", name: "loupe build.ts --release", version }] },
      component: { type: "application", "bom-ref": `pkg:generic/loupe@${version}`, name: "loupe", version },
    },
    components: [
      { ...component("bun", Bun.version, "MIT", "the runtime compiled into the executable"), type: "framework" },
      ...packages.map(({ pkg }) => component(pkg.name, pkg.version, licenceOf(pkg), pkg.description)),
    ],
  };
}

/** Debian's architecture name for Bun's. */
const DEB_ARCH = { x64: "amd64", arm64: "arm64" } as const;

/** The same release as a .deb, built with dpkg-deb from a tree at Debian's paths. */
async function makeDeb(o: ReleaseOptions, tree: string, staging: string): Promise<string> {
  const pkgRoot = join(staging, "deb");
  const debian = join(pkgRoot, "DEBIAN");
  mkdirSync(debian, { recursive: true, mode: 0o755 });
  const put = (from: string, to: string, mode: number) => {
    mkdirSync(dirname(join(pkgRoot, to)), { recursive: true });
    cpSync(from, join(pkgRoot, to));
    chmodSync(join(pkgRoot, to), mode);
  };
  put(join(tree, "bin/loupe"), "usr/bin/loupe", 0o755);
  put(join(tree, "loupe.toml"), "etc/loupe/loupe.toml", 0o640);
  const unit = readFileSync(join(tree, "loupe.service"), "utf8")
    .replaceAll("/usr/local/bin/loupe", "/usr/bin/loupe")
    .replaceAll("/usr/local/share/doc/loupe", "/usr/share/doc/loupe");
  mkdirSync(join(pkgRoot, "lib/systemd/system"), { recursive: true });
  writeFileSync(join(pkgRoot, "lib/systemd/system/loupe.service"), unit, { mode: 0o644 });
  for (const f of ["README.md", "sbom.cdx.json", ...readdirSync(join(tree, "docs")).map((d) => `docs/${d}`)])
    put(join(tree, f), `usr/share/doc/loupe/${f.replace(/^docs\//, "")}`, 0o644);

  const size = Math.ceil(filesUnder(pkgRoot).reduce((n, f) => n + statSync(join(pkgRoot, f)).size, 0) / 1024);
  const arch = DEB_ARCH[o.arch];
  writeFileSync(
    join(debian, "control"),
    `Package: loupe
Version: ${o.version}
Architecture: ${arch}
Maintainer: Loupe maintainers <loupe@localhost>
Installed-Size: ${size}
Depends: libc6 (>= 2.27), passwd
Section: net
Priority: optional
Description: management and access layer over Apache Kafka
 One executable: the web UI, the REST API and SQL over Kafka topics, run as the
 hardened systemd service loupe.service. Configuration in /etc/loupe/loupe.toml.
`,
  );
  writeFileSync(join(debian, "conffiles"), "/etc/loupe/loupe.toml\n");
  writeFileSync(join(debian, "postinst"), POSTINST, { mode: 0o755 });
  writeFileSync(join(debian, "prerm"), PRERM, { mode: 0o755 });
  writeFileSync(join(debian, "postrm"), POSTRM, { mode: 0o755 });
  const deb = join(o.outDir, `loupe_${o.version}_${arch}.deb`);
  await run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", pkgRoot, deb]);
  return deb;
}

/** DPKG_ROOT: set when dpkg installs into another root (--root with --force-script-chrootless). */
const POSTINST = `#!/bin/sh
set -e
root="\${DPKG_ROOT:-}"
if [ "$1" = configure ]; then
  if ! grep -q '^loupe:' "$root/etc/passwd" 2>/dev/null; then
    if [ -n "$root" ]; then
      useradd --prefix "$root" --system --user-group --home-dir /var/lib/loupe --shell /usr/sbin/nologin loupe
    else
      useradd --system --user-group --home-dir /var/lib/loupe --shell /usr/sbin/nologin loupe
    fi
  fi
  uid="$(awk -F: '$1 == "loupe" { print $3 }' "$root/etc/passwd")"
  gid="$(awk -F: '$1 == "loupe" { print $3 }' "$root/etc/group")"
  install -d -m 0700 -o "$uid" -g "$gid" "$root/var/lib/loupe"
  chown "0:$gid" "$root/etc/loupe" "$root/etc/loupe/loupe.toml"
  chmod 0750 "$root/etc/loupe"
  chmod 0640 "$root/etc/loupe/loupe.toml"
  if [ -z "$root" ] && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable loupe.service >/dev/null 2>&1 || true
    systemctl restart loupe.service || true
  fi
fi
`;

const PRERM = `#!/bin/sh
set -e
if [ -z "\${DPKG_ROOT:-}" ] && [ "$1" = remove ] && [ -d /run/systemd/system ]; then
  systemctl disable --now loupe.service >/dev/null 2>&1 || true
fi
`;

/** Removing keeps the data and the user; purging takes them too, as install.sh --uninstall --purge. */
const POSTRM = `#!/bin/sh
set -e
root="\${DPKG_ROOT:-}"
if [ -z "$root" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
if [ "$1" = purge ]; then
  rm -rf "$root/var/lib/loupe" "$root/etc/loupe"
  if grep -q '^loupe:' "$root/etc/passwd" 2>/dev/null; then
    if [ -n "$root" ]; then userdel --prefix "$root" loupe; else userdel loupe; fi
  fi
fi
`;

/** One entry of a tar layer, with the owner and mode it has in the image whoever builds it. */
interface TarEntry {
  path: string;
  mode: number;
  uid: number;
  gid: number;
  data?: Uint8Array;
}

/** A ustar header field: octal, zero-padded, NUL-terminated. */
function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, "0")}\0`;
}

/**
 * A POSIX ustar archive of `entries` (directories end with "/"), every time 0: the same input
 * makes the same bytes, so the layer's digest depends on its content only.
 */
function ustar(entries: TarEntry[]): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = [];
  const enc = new TextEncoder();
  for (const e of entries) {
    if (e.path.length > 100) throw new Error(`tar path too long: ${e.path}`);
    const dir = e.path.endsWith("/");
    const size = dir ? 0 : (e.data?.length ?? 0);
    const h = new Uint8Array(512);
    const put = (offset: number, text: string) => h.set(enc.encode(text), offset);
    put(0, e.path);
    put(100, octal(e.mode, 8));
    put(108, octal(e.uid, 8));
    put(116, octal(e.gid, 8));
    put(124, octal(size, 12));
    put(136, octal(0, 12));
    put(148, "        ");
    put(156, dir ? "5" : "0");
    put(257, "ustar\u000000");
    const sum = h.reduce((a, b) => a + b, 0);
    put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
    parts.push(h);
    if (!dir && e.data) {
      parts.push(e.data);
      if (size % 512) parts.push(new Uint8Array(512 - (size % 512)));
    }
  }
  parts.push(new Uint8Array(1024));
  return new Uint8Array(Buffer.concat(parts));
}

/** The shared libraries the executable links, as `ldd` lists them (the image has no others). */
function linkedLibraries(exe: string): string[] {
  const out = Bun.spawnSync(["ldd", exe], { stdout: "pipe" }).stdout.toString();
  return [...out.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
}

/** The uid and gid of `loupe` in the image: not root, and above any host's system range. */
const IMAGE_UID = 10001;

async function makeOci(o: ReleaseOptions, tree: string): Promise<string> {
  const dirs = (paths: string[], mode = 0o755, uid = 0) => paths.map((p) => ({ path: `${p}/`, mode, uid, gid: uid }));
  const file = (path: string, data: Uint8Array | string, mode = 0o644) => ({
    path,
    mode,
    uid: 0,
    gid: 0,
    data: typeof data === "string" ? new TextEncoder().encode(data) : data,
  });
  const libs = linkedLibraries(join(tree, "bin/loupe"));
  if (libs.length === 0) throw new Error("ldd names no library of the executable: the image would not start");
  const libDirs = [...new Set(libs.flatMap((l) => ancestors(dirname(l).slice(1))))].sort();
  const layer = ustar([
    ...dirs([...new Set(["etc", "tmp", "usr", "usr/local", "usr/local/bin", "var", "var/lib", ...libDirs])].sort()).map((d) =>
      d.path === "tmp/" ? { ...d, mode: 0o1777 } : d,
    ),
    ...dirs(["var/lib/loupe"], 0o700, IMAGE_UID),
    file("etc/passwd", `root:x:0:0:root:/root:/sbin/nologin\nloupe:x:${IMAGE_UID}:${IMAGE_UID}::/var/lib/loupe:/sbin/nologin\n`),
    file("etc/group", `root:x:0:\nloupe:x:${IMAGE_UID}:\n`),
    ...libs.map((l) => file(l.slice(1), readFileSync(realpathSync(l)), 0o755)),
    file("usr/local/bin/loupe", readFileSync(join(tree, "bin/loupe")), 0o755),
  ]);
  const gz = Bun.gzipSync(layer, { level: 6 });
  const digest = (b: Uint8Array) => `sha256:${new Bun.CryptoHasher("sha256").update(b).digest("hex")}`;
  const arch = DEB_ARCH[o.arch];
  const config = new TextEncoder().encode(
    JSON.stringify({
      architecture: arch,
      os: "linux",
      config: {
        User: `${IMAGE_UID}:${IMAGE_UID}`,
        Env: ["PATH=/usr/local/bin", "LOUPE_DATA_DIR=/var/lib/loupe", "LOUPE_HOST=0.0.0.0"],
        Entrypoint: ["/usr/local/bin/loupe"],
        Cmd: ["serve"],
        WorkingDir: "/var/lib/loupe",
        ExposedPorts: { "9991/tcp": {} },
        Volumes: { "/var/lib/loupe": {} },
        Labels: { "org.opencontainers.image.title": "loupe", "org.opencontainers.image.version": o.version },
      },
      rootfs: { type: "layers", diff_ids: [digest(layer)] },
      history: [{ created_by: "bun build.ts --release" }],
    }),
  );
  const manifest = new TextEncoder().encode(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: digest(config), size: config.length },
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: digest(gz), size: gz.length }],
    }),
  );
  const index = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [
      {
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        digest: digest(manifest),
        size: manifest.length,
        annotations: { "org.opencontainers.image.ref.name": `loupe:${o.version}` },
        platform: { architecture: arch, os: "linux" },
      },
    ],
  };
  const blob = (b: Uint8Array) => file(`blobs/sha256/${digest(b).slice("sha256:".length)}`, b);
  const archive = ustar([
    ...dirs(["blobs", "blobs/sha256"]),
    file("oci-layout", JSON.stringify({ imageLayoutVersion: "1.0.0" })),
    file("index.json", JSON.stringify(index)),
    blob(config),
    blob(manifest),
    blob(gz),
  ]);
  const out = join(o.outDir, `loupe-${o.version}-linux-${o.arch}-oci.tar`);
  writeFileSync(out, archive);
  writeFileSync(`${out}.sha256`, `${sha256(out)}  loupe-${o.version}-linux-${o.arch}-oci.tar\n`);
  return out;
}

/** "a/b/c" -> ["a", "a/b", "a/b/c"]. */
function ancestors(path: string): string[] {
  const parts = path.split("/");
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}
