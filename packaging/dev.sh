#!/usr/bin/env bash
# mavboard's two set-up commands, for a fresh Debian/Ubuntu machine:
#   ./packaging/dev.sh run [ARGS...]   install what is missing, build, and run mavboard (no ARGS: the app)
#   ./packaging/dev.sh test            install what is missing, build, and run the whole test suite
# Every step is idempotent: a second call skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m[dev.sh]\033[0m %s\n' "$*" >&2; }

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

# Debian packages the build and the tests use.
APT_PACKAGES=(build-essential pkg-config)

install_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    sudo_if_needed apt-get update -qq
    DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

install_rust() {
  if ! command -v cargo >/dev/null; then
    log "cargo not found: install Rust with rustup (https://rustup.rs), then run this again"
    exit 1
  fi
}

cmd="${1:-}"
shift || true
case "$cmd" in
  run)
    install_apt
    install_rust
    cargo build --release --locked
    exec ./target/release/mavboard "$@"
    ;;
  test)
    install_apt
    install_rust
    cargo build --locked --all-targets
    cargo test --locked --all-targets
    cargo test --locked --doc
    ;;
  *)
    echo "usage: $0 run [ARGS...] | test" >&2
    exit 2
    ;;
esac
