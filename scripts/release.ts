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
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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
  return { tarball, deb, tree };
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
