#!/usr/bin/env bash
# Runs every fuzz target (or those named) for a given time or number of executions, each with a corpus
# seeded from the repo's fixtures and kept in corpus/<target>/ between runs, and prints a table: target,
# executions, seconds, executions per second, corpus size, crashes (inputs left in artifacts/<target>/).
#
#   fuzz/run.sh [--seconds S | --runs N] [--jobs J] [--max-len BYTES] [--sanitizer S] [TARGET ...]
#
# --seconds S  per target (default 300); --runs N  executions per target instead (libFuzzer's -runs);
# --jobs J     libFuzzer processes per target (default 1; their executions are added up);
# --sanitizer  address (default, cargo-fuzz's) or none: the crate denies unsafe code, so AddressSanitizer
#              watches only the C and C++ below it; none skips its checks and their cost;
# The summary also goes to results/fuzz/<date>.tsv (one line per target). Needs cargo-fuzz and nightly
# Rust (`cargo install cargo-fuzz`, `rustup toolchain install nightly`). Run by hand, not in CI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$here"

seconds=300 runs="" jobs=1 max_len="" sanitizer=address
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --max-len) max_len=$2; shift 2 ;;
        --sanitizer) sanitizer=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
all=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^mavboard-fuzz$')
if [[ ${#targets[@]} -eq 0 ]]; then mapfile -t targets <<<"$all"; fi
for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$all" || { echo "run.sh: no target '$t' (targets: $(echo $all))" >&2; exit 2; }
done

# Splits PGN files into one file per game (the first $2 games of each), so that seeds stay small.
split_pgn() {
    local out=$1 limit=$2; shift 2
    for f in "$@"; do
        awk -v out="$out" -v base="$(basename "$f" .pgn)" -v limit="$limit" '
            /^\[Event / { if (n >= limit) exit; n++; file = sprintf("%s/%s-%04d.pgn", out, base, n) }
            file != "" { print > file }
        ' "$f"
    done
}

# Seeds each corpus from the fixtures once (a corpus already there is kept as it is, and grows).
seed() {
    local t=$1 dir=corpus/$1
    [[ -d $dir ]] && return 0
    mkdir -p "$dir"
    [[ -d seeds/$t ]] && cp seeds/"$t"/* "$dir"/
    case "$t" in
        pgn)
            cp "$repo"/tests/fixtures/pgn/{blank-lines,broken-middle,unrecognized-tokens}.pgn "$dir"/
            split_pgn "$dir" 40 "$repo"/tests/fixtures/pgn/{kokopu-chess960,lichess_db_2025-05_sample_1MB,twic1599_sample_1MB}.pgn
            find "$repo"/tests/fixtures/pgn/python-chess -name '*.pgn' -size -64k -exec cp {} "$dir"/ \; ;;
        fen | mav_response)
            local i=0
            while IFS= read -r line; do
                i=$((i + 1)); printf '%s' "${line%%;*}" > "$dir/fen-$i.txt"
            done < <(cat "$repo"/tests/fixtures/perft/*.epd | head -200) ;;
        records)
            printf '4453' > "$dir/c4.txt"
            printf '(;FF[4]AP[HexGui:0.9]GM[11]SZ[5];B[c3];W[swap-pieces];B[b3];W[resign])' > "$dir/hex.sgf"
            printf 'info depth 12 seldepth 18 multipv 1 score cp 31 wdl 400 500 100 nodes 1000 pv e2e4 e7e5' > "$dir/info.txt" ;;
        lc0_net)
            # The fixture nets unpacked (the target reads the protobuf; gzip's checksum would stop mutation).
            for f in "$repo"/tests/fixtures/lc0/{random-*,onnx2leela-*}.pb.gz; do
                gzip -dc "$f" > "$dir/$(basename "$f" .pb.gz).pb"
            done ;;
        lc0_onnx)
            for f in "$repo"/tests/fixtures/lc0/leela2onnx-*.onnx.gz; do
                gzip -dc "$f" > "$dir/$(basename "$f" .gz)"
            done ;;
        tls_config)
            # A CA, a client certificate and its key made here with openssl (no key is committed): the
            # endpoint line, then the three PEM files separated by NUL bytes, in the combinations a package has.
            local tmp; tmp=$(mktemp -d)
            for kind in ec rsa; do
                local opt=(-newkey ec -pkeyopt ec_paramgen_curve:P-256)
                [[ $kind == rsa ]] && opt=(-newkey rsa:2048)
                openssl req -x509 "${opt[@]}" -nodes -keyout "$tmp/$kind.key" -out "$tmp/$kind.pem" \
                    -subj "/CN=mavboard fuzz seed" -days 2 2>/dev/null
                { printf 'https://127.0.0.1:8443\n'; cat "$tmp/$kind.pem"; } > "$dir/ca-$kind"
                { printf 'https://[::1]:9/v2\n'; cat "$tmp/$kind.pem"; printf '\0'; cat "$tmp/$kind.pem"; printf '\0'
                  cat "$tmp/$kind.key"; } > "$dir/mtls-$kind"
                { printf 'http://user@localhost\n\0'; cat "$tmp/$kind.pem"; printf '\0'; cat "$tmp/$kind.key"; } \
                    > "$dir/client-$kind"
            done
            { printf 'https://gpu-box\n\0'; cat "$tmp/ec.pem"; printf '\0'; cat "$tmp/rsa.key"; } > "$dir/mismatch"
            rm -rf "$tmp" ;;
        manifest)
            for m in "$repo"/assets/models/*/mav.json "$repo"/tests/fixtures/models/*/mav.json; do
                cp "$m" "$dir/$(basename "$(dirname "$m")").json"
            done ;;
    esac
}

stamp=$(date -u +%Y-%m-%dT%H%M)
mkdir -p "$repo/results/fuzz" artifacts
summary="$repo/results/fuzz/$stamp.tsv"
printf '# sanitizer %s\n' "$sanitizer" >"$summary"
printf 'target\texecutions\tseconds\texec/s\tcorpus\tcrashes\n' | tee -a "$summary"
# The source the build starts from (edits made while it runs are not in it).
printf '# commit %s\n' "$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- src || echo '+changes')" >>"$summary"
cargo +nightly fuzz build --sanitizer "$sanitizer"
# Every target runs the binary built here, so the whole run tests one build of the source (edits made
# while it runs do not rebuild it half-way).
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
for t in "${targets[@]}"; do
    seed "$t"
    mkdir -p "artifacts/$t"
    before=$(find "artifacts/$t" -type f | wc -l)
    args=(-artifact_prefix="artifacts/$t/" -print_final_stats=1)
    if [[ -n $runs ]]; then args+=(-runs=$((runs / jobs))); else args+=(-max_total_time="$seconds"); fi
    [[ -n $max_len ]] && args+=(-max_len="$max_len")
    log=artifacts/$t.log
    start=$(date +%s)
    if [[ $jobs -gt 1 ]]; then
        "target/$triple/release/$t" "corpus/$t" "${args[@]}" -jobs="$jobs" -workers="$jobs" >"$log" 2>&1 || true
        cat fuzz-*.log >>"$log" 2>/dev/null || true; rm -f fuzz-*.log
    else
        "target/$triple/release/$t" "corpus/$t" "${args[@]}" >"$log" 2>&1 || true
    fi
    took=$(( $(date +%s) - start ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
    crashes=$(( $(find "artifacts/$t" -type f | wc -l) - before ))
    corpus=$(find "corpus/$t" -type f | wc -l)
    rate=$(( execs / (took > 0 ? took : 1) ))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$execs" "$took" "$rate" "$corpus" "$crashes" | tee -a "$summary"
done
echo "summary: $summary; logs: fuzz/artifacts/<target>.log"
