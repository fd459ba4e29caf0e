#!/usr/bin/env bash
# Installs Loupe on this host as a hardened systemd service, offline: it needs nothing but
# the files beside it (the unpacked release, or a checkout after `bun build.ts`).
#
#   sudo ./install.sh [--no-start] [--memory-max 2G] [--root DIR] [--binary PATH]
#   sudo ./install.sh --uninstall [--purge] [--root DIR]
#
# Puts the executable at /usr/local/bin/loupe, creates the system user `loupe`, the data
# directory /var/lib/loupe (0700 loupe), a starting configuration /etc/loupe/loupe.toml
# (0640 root:loupe, kept if it exists: an upgrade never touches it), the unit loupe.service
# and the docs under /usr/local/share/doc/loupe; then runs `loupe doctor`. Run it again to
# upgrade: the binary, the unit and the docs are replaced, the configuration and data stay.
# --memory-max (or LOUPE_MEMORY_MAX) is the unit's MemoryMax: 1G plus
# processors.maxStateBytes (64m) times the processors it runs, 2G by default.
# --root DIR installs under DIR instead of / (a scratch root, an image being built): the
# user goes into DIR/etc/passwd, nothing is started. DESTDIR does the same.
# --uninstall removes the binary, the unit and the docs and keeps the configuration, the
# data and the user; with --purge those go too.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${DESTDIR:-}"
binary=""
start=1
uninstall=0
purge=0
memory_max="${LOUPE_MEMORY_MAX:-2G}"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --no-start) start=0; shift ;;
    --memory-max) memory_max="$2"; shift 2 ;;
    --root) root="$2"; shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
root="${root%/}"
[ "$purge" -eq 0 ] || [ "$uninstall" -eq 1 ] || { echo "--purge goes with --uninstall" >&2; exit 2; }
[[ "$memory_max" =~ ^[0-9]+[KMGT]?$ ]] || { echo "--memory-max takes a size such as 2G or 1536M, not '$memory_max'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "install.sh must run as root" >&2; exit 1; }

bin="$root/usr/local/bin/loupe"
etc="$root/etc/loupe"
config="$etc/loupe.toml"
data="$root/var/lib/loupe"
unit="$root/etc/systemd/system/loupe.service"
docs="$root/usr/local/share/doc/loupe"
did() { echo "  $*"; }
# systemctl only on the host itself, and only where systemd runs.
systemd_here() { [ -z "$root" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; }

if [ "$uninstall" -eq 1 ]; then
  echo "Removing Loupe${root:+ from $root}:"
  if systemd_here; then
    systemctl disable --now loupe.service 2>/dev/null && did "stopped and disabled loupe.service" || true
  fi
  for f in "$unit" "$bin"; do
    if [ -e "$f" ]; then rm -f "$f"; did "removed $f"; fi
  done
  if [ -d "$docs" ]; then rm -rf "$docs"; did "removed $docs"; fi
  systemd_here && systemctl daemon-reload
  if [ "$purge" -eq 1 ]; then
    for d in "$data" "$etc"; do
      if [ -d "$d" ]; then rm -rf "$d"; did "removed $d"; fi
    done
    if grep -q '^loupe:' "$root/etc/passwd" 2>/dev/null; then
      if [ -n "$root" ]; then userdel --prefix "$root" loupe; else userdel loupe; fi
      did "removed the user loupe"
    fi
  else
    did "kept $config and the data in $data (remove them with --uninstall --purge)"
  fi
  exit 0
fi

# The files to install: beside this script in a release, or in a checkout.
if [ -f "$here/loupe.service" ]; then
  unit_src="$here/loupe.service"; config_src="$here/loupe.toml"; docs_src="$here/docs"
  binary="${binary:-$here/bin/loupe}"
  if [ -f "$here/SHA256SUMS" ]; then
    (cd "$here" && sha256sum --quiet --check SHA256SUMS) || { echo "the release's files do not match SHA256SUMS: unpack it again" >&2; exit 1; }
  fi
else
  unit_src="$here/deploy/loupe.service"; config_src="$here/deploy/loupe.toml"; docs_src="$here/docs"
  binary="${binary:-$here/dist/loupe}"
fi
[ -x "$binary" ] || { echo "no executable at $binary: run 'bun build.ts' first" >&2; exit 1; }
version="$("$binary" --version)"

echo "Installing Loupe $version${root:+ under $root}:"
install -d -m 0755 "$root/usr/local/bin" "$root/etc/systemd/system" "$root/var/lib"
upgrade=""
[ -x "$bin" ] && upgrade=" (was $("$bin" --version 2>/dev/null || echo unknown))"
install -m 0755 "$binary" "$bin"
did "installed $bin $version$upgrade"

if [ -n "$root" ] && [ ! -f "$root/etc/passwd" ]; then
  # A bare scratch root: the account files useradd expects, with root alone.
  install -d -m 0755 "$root/etc"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\n' >"$root/etc/group"
  (umask 077; printf 'root:*:1::::::\n' >"$root/etc/shadow"; printf 'root:*::\n' >"$root/etc/gshadow")
fi
if grep -q '^loupe:' "$root/etc/passwd" 2>/dev/null; then
  did "kept the user loupe"
else
  if [ -n "$root" ]; then prefix=(--prefix "$root"); else prefix=(); fi
  useradd "${prefix[@]}" --system --user-group --home-dir /var/lib/loupe --shell /usr/sbin/nologin loupe
  did "created the system user loupe"
fi
# Numeric ids from the root's own account files: under --root the host's may differ.
uid="$(awk -F: '$1 == "loupe" { print $3 }' "$root/etc/passwd")"
gid="$(awk -F: '$1 == "loupe" { print $3 }' "$root/etc/group")"

install -d -m 0700 -o "$uid" -g "$gid" "$data"
chmod 0700 "$data"
chown "$uid:$gid" "$data"
did "data directory $data (0700 loupe:loupe)"
install -d -m 0750 -o 0 -g "$gid" "$etc"
if [ -f "$config" ]; then
  did "kept $config"
else
  install -m 0640 -o 0 -g "$gid" "$config_src" "$config"
  did "wrote $config (0640 root:loupe): set the Kafka cluster there"
fi

sed "s/^MemoryMax=.*/MemoryMax=${memory_max}/" "$unit_src" >"$unit.new"
chmod 0644 "$unit.new"
mv "$unit.new" "$unit"
did "wrote $unit (MemoryMax=$memory_max)"

if [ -d "$docs_src" ]; then
  install -d -m 0755 "$docs"
  install -m 0644 "$docs_src"/*.md "$docs/"
  did "docs in $docs"
fi

env LOUPE_CONFIG="$config" "$bin" check-config >/dev/null
did "checked $config"

if systemd_here; then
  systemctl daemon-reload
  if [ "$start" -eq 1 ]; then
    systemctl enable loupe.service >/dev/null 2>&1
    systemctl restart loupe.service
    did "enabled and (re)started loupe.service: journalctl -u loupe -f"
  else
    systemctl enable loupe.service >/dev/null 2>&1
    did "enabled loupe.service (not started: systemctl start loupe)"
  fi
else
  did "not started: ${root:+installed under $root}${root:-systemd is not running here}"
fi

echo "Checking what Loupe will connect to (loupe doctor):"
if env LOUPE_CONFIG="$config" LOUPE_DATA_DIR="$data" "$bin" doctor | sed 's/^/  /'; then
  :
else
  echo "  loupe doctor found problems: fix them in $config, then run 'loupe doctor' again"
fi

# The URL from the [server] section of the configuration.
server_value() {
  awk -F= -v key="$1" '/^\[/ { in_server = ($0 ~ /^\[server\]/) } in_server && $1 ~ "^[ \t]*" key "[ \t]*$" { gsub(/[ \t"]/, "", $2); print $2; exit }' "$config"
}
host="$(server_value host)"; port="$(server_value port)"
case "${host:-0.0.0.0}" in 0.0.0.0|::) host="$(hostname -f 2>/dev/null || hostname)" ;; esac
echo "Loupe $version: http://${host}:${port:-9991}/"
