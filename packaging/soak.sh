#!/usr/bin/env bash
# The soak test (run by hand, not in CI): the release app under Xvfb for an hour (by default) with the
# scripted workload of `mavboard soak` (crates/app/src/app/soak.rs: a 1 GB PGN opened, games stepped through, a review
# by the model and one by Stockfish, MAV-MCTS started and stopped, the UCI panel, the Inside panel, another
# model and back, a game against the model, over and over). Every 10 s it samples the app's resident memory,
# threads and open file descriptors into a CSV, then plots them to a PNG and prints the figures: resident
# memory at 5 minutes against its maximum and its last value after that (growth in %), the highs of each
# 3-minute workload cycle after that (the envelope: last against first, trend per hour), threads and
# descriptors at 5 minutes and at the end, the transparent huge pages at the end, the resident memory split
# into anonymous, file-backed and shared, and the anonymous part by allocator (mimalloc's arenas, glibc's
# arenas and heap), at 5 minutes, at the maximum and at the end, and the panics in the app's log.
#
#   ./packaging/soak.sh [--minutes N] [--no-build] [--out DIR]     (MAVBOARD_BIN=... runs another binary)
#
# Output (default DIR target/soak/): soak.csv, soak.png, summary.txt, the app's state folder (state/: its
# log, crash reports and crash journal) and the 1 GB PGN (big.pgn, built once). The app's settings go to
# DIR/config, so the user's own are not touched. Needs xvfb-run (apt-get install xvfb xauth), Mesa's
# software Vulkan (mesa-vulkan-drivers), Stockfish (/usr/games/stockfish or STOCKFISH=...) and python3 (the
# plot's matplotlib is installed from PyPI into .venv-soak/).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
MINUTES=60
BUILD=1
OUT="$ROOT/target/soak"
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "usage: $0 [--minutes N] [--no-build] [--out DIR]" >&2; exit 2 ;;
  esac
done
STOCKFISH="${STOCKFISH:-/usr/games/stockfish}"
BIN="${MAVBOARD_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/mavboard}"
log() { printf 'soak: %s\n' "$*" >&2; }

for tool in xvfb-run python3; do
  command -v "$tool" >/dev/null || { log "$tool is missing (apt-get install xvfb xauth python3-venv)"; exit 1; }
done
[ -x "$STOCKFISH" ] || { log "no Stockfish at $STOCKFISH (apt-get install stockfish, or STOCKFISH=...)"; exit 1; }
if [ "$BUILD" = 1 ]; then
  cargo build --release --locked
fi
[ -x "$BIN" ] || { log "no release binary at $BIN (cargo build --release)"; exit 1; }
mkdir -p "$OUT"

# The 1 GB PGN: the fixtures that read without an error, concatenated over and over.
BIG="$OUT/big.pgn"
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt 1000000000 ]; then
  log "building $BIG"
  block="$OUT/block.pgn"
  : > "$block"
  for f in tests/fixtures/pgn/*.pgn; do
    if "$BIN" pgn check "$f" 2>&1 | grep -q ' 0 with errors'; then
      cat "$f" >> "$block"
      printf '\n\n' >> "$block"
    else
      log "left out $f (games with errors)"
    fi
  done
  # Double the block to 64 MB or more, then repeat it up to 1 GB.
  while [ "$(stat -c %s "$block")" -lt 67108864 ]; do
    cat "$block" "$block" > "$block.2" && mv "$block.2" "$block"
  done
  : > "$BIG.part"
  while [ "$(stat -c %s "$BIG.part")" -lt 1000000000 ]; do
    cat "$block" >> "$BIG.part"
  done
  mv "$BIG.part" "$BIG"
  rm -f "$block"
fi
log "$BIG: $(( $(stat -c %s "$BIG") / 1000000 )) MB"

# The plot's Python environment.
VENV="$ROOT/.venv-soak"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import matplotlib' 2>/dev/null; then
  log "creating $VENV (matplotlib from PyPI)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet matplotlib
fi

# A fresh state folder (log, crash reports, journal) and config folder for this run.
rm -rf "$OUT/state" "$OUT/config"
mkdir -p "$OUT/state" "$OUT/config"
CSV="$OUT/soak.csv"
APP_OUT="$OUT/app-output.txt"
echo "elapsed_s,rss_kib,threads,fds,anon_huge_kib,rss_anon_kib,rss_file_kib,rss_shmem_kib,big_kib,glibc_arenas_kib,glibc_heap_kib,other_anon_kib" > "$CSV"

log "running the app for $MINUTES minutes under Xvfb"
XDG_STATE_HOME="$OUT/state" XDG_CONFIG_HOME="$OUT/config" \
  RUST_LOG="${RUST_LOG:-warn,mavboard::shell=info}" RUST_BACKTRACE=1 \
  xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$BIN" soak --pgn "$BIG" --stockfish "$STOCKFISH" --minutes "$MINUTES" > "$APP_OUT" 2>&1 &
RUNNER=$!

# The app's own process: xvfb-run's child (not any other mavboard soak that runs).
PID=""
for _ in $(seq 1 300); do
  PID=$(pgrep -P "$RUNNER" -f "soak --pgn" || true)
  [ -n "$PID" ] && break
  kill -0 "$RUNNER" 2>/dev/null || break
  sleep 0.1
done
[ -n "$PID" ] || { log "the app did not start:"; cat "$APP_OUT" >&2; exit 1; }
log "app pid $PID; sampling every 10 s into $CSV"

START=$(date +%s)
sample() {
  local now rss threads fds huge anon file shmem heaps
  now=$(( $(date +%s) - START ))
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status" 2>/dev/null) || return 1
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$PID/status" 2>/dev/null) || return 1
  fds=$(ls "/proc/$PID/fd" 2>/dev/null | wc -l)
  # Transparent huge pages in the resident memory (0 where the kernel has none).
  huge=$(awk '/^AnonHugePages:/ {print $2}' "/proc/$PID/smaps_rollup" 2>/dev/null || true)
  # Where the resident memory is: the heap and other anonymous memory, mapped files (the binary with its
  # embedded model, libraries), shared memory (the display's buffers).
  read -r anon file shmem < <(awk '/^RssAnon:/ {a = $2} /^RssFile:/ {f = $2} /^RssShmem:/ {s = $2}
    END {print a + 0, f + 0, s + 0}' "/proc/$PID/status" 2>/dev/null) || return 1
  # The anonymous part by allocator: mimalloc's arenas, glibc's (packaging/soak_maps.py).
  heaps=$(python3 packaging/soak_maps.py "$PID") || return 1
  [ -n "$rss" ] && [ -n "$threads" ] || return 1
  echo "$now,$rss,$threads,$fds,${huge:-0},$anon,$file,$shmem,$heaps" >> "$CSV"
}
while kill -0 "$PID" 2>/dev/null; do
  sample || break
  sleep 10
done
set +e
wait "$RUNNER"
STATUS=$?
set -e
log "the app ended with status $STATUS after $(( $(date +%s) - START )) s"

LOGS="$OUT/state/mavboard/logs"
count() { cat "$LOGS"/mavboard.log* 2>/dev/null | grep -c "$1" || true; }
PANICS=$(count 'panicked')
REPORTS=$(find "$LOGS" -maxdepth 1 -name 'panic-*.txt' 2>/dev/null | wc -l)
ERRORS=$(count 'soak: the app showed an error')
CYCLES=$(count 'soak: next cycle')
"$VENV/bin/python" packaging/soak_plot.py "$CSV" "$OUT/soak.png" \
  --panics "$PANICS" --reports "$REPORTS" --exit-status "$STATUS" --cycles "$CYCLES" \
  --app-errors "$ERRORS" | tee "$OUT/summary.txt"
log "CSV $CSV, plot $OUT/soak.png, log $LOGS/mavboard.log"
