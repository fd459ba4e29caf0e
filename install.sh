#!/usr/bin/env bash
# Installs Loupe on this host as a systemd service.
#
#   sudo ./install.sh [--binary dist/loupe] [--no-start] [--memory-max 2G]
#
# Puts the executable at /usr/local/bin/loupe, creates the system user `loupe`,
# the data directory /var/lib/loupe (0700), a starting configuration at
# /etc/loupe/loupe.toml (kept if it exists) and the unit loupe.service.
# --memory-max (or LOUPE_MEMORY_MAX) is the unit's MemoryMax: 1G plus
# processors.maxStateBytes (64m) times the processors it runs, 2G by default.
# Works offline: it needs nothing but the compiled binary (bun build.ts).
set -euo pipefail

binary="dist/loupe"
start=1
memory_max="${LOUPE_MEMORY_MAX:-2G}"
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --no-start) start=0; shift ;;
    --memory-max) memory_max="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done

[[ "$memory_max" =~ ^[0-9]+[KMGT]?$ ]] || { echo "--memory-max takes a size such as 2G or 1536M, not '$memory_max'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "install.sh must run as root" >&2; exit 1; }
[ -x "$binary" ] || { echo "no executable at $binary: run 'bun build.ts' first" >&2; exit 1; }

install -m 0755 "$binary" /usr/local/bin/loupe
/usr/local/bin/loupe --version >/dev/null

if ! id loupe >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/loupe --shell /usr/sbin/nologin loupe
fi
install -d -m 0700 -o loupe -g loupe /var/lib/loupe
install -d -m 0750 -o root -g loupe /etc/loupe

if [ ! -f /etc/loupe/loupe.toml ]; then
  cat > /etc/loupe/loupe.toml <<'TOML'
# Loupe configuration. Reference: docs/configuration.md (every key, its default and variable).
dataDir = "/var/lib/loupe"

[server]
host = "0.0.0.0"
port = 9991
# Names users reach Loupe by, besides its IP addresses, localhost and this machine's
# name (any other Host is answered 421): a reverse proxy's public name, a DNS alias.
# allowedHosts = ["loupe.example.com"]

[[kafka.clusters]]
name = "default"
bootstrapServers = "127.0.0.1:9092"
default = true

# Users: hash a password with `loupe hash-password`. With no users, the first
# start creates `admin` and prints its password once to the journal.
# [[users]]
# name = "alice"
# passwordHash = "$argon2id$..."
# roles = ["admin"]
TOML
  chown root:loupe /etc/loupe/loupe.toml
  chmod 0640 /etc/loupe/loupe.toml
fi

/usr/local/bin/loupe check-config --config /etc/loupe/loupe.toml

cat > /etc/systemd/system/loupe.service <<UNIT
[Unit]
Description=Loupe, management and access layer over Apache Kafka
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=loupe
Group=loupe
Environment=LOUPE_CONFIG=/etc/loupe/loupe.toml
ExecStartPre=/usr/local/bin/loupe check-config
ExecStart=/usr/local/bin/loupe serve
Restart=on-failure
RestartSec=3
# A bad configuration exits 2: do not restart in a loop.
RestartPreventExitStatus=2
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
ReadWritePaths=/var/lib/loupe
LimitNOFILE=65536
# A ceiling on the whole service: past it the kernel ends Loupe, never the host. Each
# processor's state is bounded on its own (processors.maxStateBytes, 64 MiB by default, which
# fails the processor alone); size this to about 1G plus that bound times the processors run
# here. A runner that was restoring or holding a large state when Loupe was ended is not
# started again blindly: its processor comes back PAUSED with the reason. Change it with
# 'install.sh --memory-max 4G' or 'systemctl edit loupe' ([Service] MemoryMax=4G).
MemoryMax=${memory_max}

[Install]
WantedBy=multi-user.target
UNIT

if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  if [ "$start" -eq 1 ]; then
    systemctl enable --now loupe.service
    echo "loupe is running: journalctl -u loupe -f"
  else
    systemctl enable loupe.service
  fi
else
  echo "systemd is not running here: unit written to /etc/systemd/system/loupe.service"
fi
