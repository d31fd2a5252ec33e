#!/usr/bin/env bash
# Instruction-level profiles of weft's throughput path with valgrind's callgrind: the
# publisher (`weft pub-thr`) and the subscriber (`weft sub-thr`), peer to peer on TCP
# loopback, one side under callgrind while the other runs natively; then the router
# (`weftd`) under callgrind between a native publisher and subscriber (both clients). Bounded: the publisher
# runs PROFILE_SECONDS (default 15) under callgrind; the subscriber counts PROFILE_SAMPLES
# messages (default 200000) and gives up after 90 s.
#
#   bench/profile.sh [SIZE]        # SIZE defaults to 8 bytes
#
# Writes target/profile/{pub-thr,sub-thr,weftd}.callgrind.out and, beside them, callgrind_annotate's
# function tables (*.exclusive.txt, *.inclusive.txt) and weft's hottest source lines and
# calls (*.lines.txt, from bench/compare/hot_lines.py).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
SIZE=${1:-8}
SECONDS_PUB=${PROFILE_SECONDS:-15}
SAMPLES=${PROFILE_SAMPLES:-200000}
PORT=${BENCH_PORT:-17900}
OUT=${PROFILE_DIR:-$ROOT/target/profile}
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$OUT"

OUT_DIR=$OUT

annotate() {
    local data=$1 base=${1%.callgrind.out}
    callgrind_annotate --inclusive=no --threshold=99 "$data" >"$base.exclusive.txt" 2>/dev/null
    callgrind_annotate --inclusive=yes --threshold=99 "$data" >"$base.inclusive.txt" 2>/dev/null
    callgrind_annotate --auto=yes --context=0 --threshold=99 "$data" 2>/dev/null \
        | python3 bench/compare/hot_lines.py 40 >"$base.lines.txt"
    echo "wrote $base.{exclusive,inclusive,lines}.txt" >&2
}

cargo build --release -p weft-cli -p weftd
CG=(valgrind --tool=callgrind --dump-instr=no --collect-jumps=no)

# Publisher under callgrind, subscriber native.
PORT=$((PORT + 1))
start sub-native 120 "$BIN/weft" sub-thr -l "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --samples 10000 --rounds 1000 --max-seconds 100
sub=$STARTED
wait_listen "$PORT" 30
timeout -k 5 $((SECONDS_PUB + 60)) "${CG[@]}" --callgrind-out-file="$OUT/pub-thr.callgrind.out" \
    "$BIN/weft" pub-thr "$SIZE" -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
    --duration "$SECONDS_PUB" >"$OUT/pub-thr.log" 2>&1 || true
kill -TERM -- "-$sub" 2>/dev/null || true
wait "$sub" 2>/dev/null || true
annotate "$OUT/pub-thr.callgrind.out"

# Subscriber under callgrind, publisher native.
PORT=$((PORT + 1))
start sub-thr 150 "${CG[@]}" --callgrind-out-file="$OUT/sub-thr.callgrind.out" \
    "$BIN/weft" sub-thr -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
    --samples "$SAMPLES" --rounds 1 --max-seconds 90
sub=$STARTED
wait_listen "$PORT" 30
start pub-native 120 "$BIN/weft" pub-thr "$SIZE" -e "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --duration 110
pub=$STARTED
wait "$sub" 2>/dev/null || true
kill -TERM -- "-$pub" 2>/dev/null || true
wait "$pub" 2>/dev/null || true
annotate "$OUT/sub-thr.callgrind.out"
# The router under callgrind, publisher and subscriber native clients of it.
PORT=$((PORT + 1))
start weftd 150 "${CG[@]}" --callgrind-out-file="$OUT/weftd.callgrind.out" \
    "$BIN/weftd" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
router=$STARTED
wait_listen "$PORT" 30
start sub-routed 120 "$BIN/weft" sub-thr -m client -e "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --samples "$SAMPLES" --rounds 1 --max-seconds 90
sub=$STARTED
sleep 1
start pub-routed 120 "$BIN/weft" pub-thr "$SIZE" -m client -e "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --duration 100
pub=$STARTED
wait "$sub" 2>/dev/null || true
kill -TERM -- "-$pub" 2>/dev/null || true
wait "$pub" 2>/dev/null || true
# weftd stops on SIGTERM; callgrind writes its profile as it exits.
kill -TERM -- "-$router" 2>/dev/null || true
wait "$router" 2>/dev/null || true
annotate "$OUT/weftd.callgrind.out"
cat "$OUT/pub-thr.log" "$OUT/sub-thr.out" "$OUT/sub-routed.out" \
    | grep -E "sent=|median|round" >&2 || true

# The same three runs for Eclipse Zenoh, as a reference, when bench/compare and zenohd are
# built (bench/run.sh builds them). Its release builds carry no line tables (zenohd none at
# all): use these for totals and call counts (for example read_loop per message).
CT=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
ZENOHD=${ZENOHD:-$CT/zenohd-1.10.2/bin/zenohd}
if [[ -x "$CT/release/zsub_thr" && -x "$CT/release/zpub_thr" && -x "$ZENOHD" ]]; then
    Z=$CT/release
    PORT=$((PORT + 1))
    start zsub-native 120 "$Z/zsub_thr" -l "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --samples 10000 --rounds 1000 --max-seconds 100
    sub=$STARTED
    wait_listen "$PORT" 30
    timeout -k 5 $((SECONDS_PUB + 60)) "${CG[@]}" --callgrind-out-file="$OUT/zpub_thr.callgrind.out" \
        "$Z/zpub_thr" "$SIZE" -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
        --duration "$SECONDS_PUB" >"$OUT/zpub_thr.log" 2>&1 || true
    kill -TERM -- "-$sub" 2>/dev/null || true
    wait "$sub" 2>/dev/null || true

    PORT=$((PORT + 1))
    start zsub_thr 150 "${CG[@]}" --callgrind-out-file="$OUT/zsub_thr.callgrind.out" \
        "$Z/zsub_thr" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
        --samples "$SAMPLES" --rounds 1 --max-seconds 90
    sub=$STARTED
    wait_listen "$PORT" 30
    start zpub-native 120 "$Z/zpub_thr" "$SIZE" -e "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --duration 110
    pub=$STARTED
    wait "$sub" 2>/dev/null || true
    kill -TERM -- "-$pub" 2>/dev/null || true
    wait "$pub" 2>/dev/null || true

    PORT=$((PORT + 1))
    start zenohd 150 "${CG[@]}" --callgrind-out-file="$OUT/zenohd.callgrind.out" \
        "$ZENOHD" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    router=$STARTED
    wait_listen "$PORT" 30
    start zsub-routed 120 "$Z/zsub_thr" -m client -e "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --samples "$SAMPLES" --rounds 1 --max-seconds 90
    sub=$STARTED
    sleep 1
    start zpub-routed 120 "$Z/zpub_thr" "$SIZE" -m client -e "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --duration 100
    pub=$STARTED
    wait "$sub" 2>/dev/null || true
    kill -TERM -- "-$pub" 2>/dev/null || true
    wait "$pub" 2>/dev/null || true
    # zenohd stops on SIGINT.
    kill -INT -- "-$router" 2>/dev/null || true
    wait "$router" 2>/dev/null || true
    for f in zpub_thr zsub_thr zenohd; do
        callgrind_annotate --inclusive=yes --threshold=99 "$OUT/$f.callgrind.out" \
            >"$OUT/$f.inclusive.txt" 2>/dev/null || true
    done
    echo "wrote $OUT/{zpub_thr,zsub_thr,zenohd}.inclusive.txt" >&2
fi
