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
SIZE=${1:-8}
SECONDS_PUB=${PROFILE_SECONDS:-15}
SAMPLES=${PROFILE_SAMPLES:-200000}
PORT=${BENCH_PORT:-17900}
OUT=${PROFILE_DIR:-$ROOT/target/profile}
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
mkdir -p "$OUT"

PIDS=()
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
    sleep 0.3
    for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start() {
    local limit=$1 log=$2
    shift 2
    timeout -k 2 "$limit" "$@" >"$log" 2>&1 &
    STARTED=$!
    PIDS+=("$STARTED")
}

wait_listen() {
    local i
    for i in $(seq 600); do
        [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]] && return 0
        sleep 0.05
    done
    echo "nothing listens on port $1" >&2
    return 1
}

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
start 120 "$OUT/sub-native.log" "$BIN/weft" sub-thr -l "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --samples 10000 --rounds 1000 --max-seconds 100
sub=$STARTED
wait_listen "$PORT"
timeout -k 5 $((SECONDS_PUB + 60)) "${CG[@]}" --callgrind-out-file="$OUT/pub-thr.callgrind.out" \
    "$BIN/weft" pub-thr "$SIZE" -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
    --duration "$SECONDS_PUB" >"$OUT/pub-thr.log" 2>&1 || true
kill -TERM -- "-$sub" 2>/dev/null || true
wait "$sub" 2>/dev/null || true
annotate "$OUT/pub-thr.callgrind.out"

# Subscriber under callgrind, publisher native.
PORT=$((PORT + 1))
start 150 "$OUT/sub-thr.log" "${CG[@]}" --callgrind-out-file="$OUT/sub-thr.callgrind.out" \
    "$BIN/weft" sub-thr -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
    --samples "$SAMPLES" --rounds 1 --max-seconds 90
sub=$STARTED
wait_listen "$PORT"
start 120 "$OUT/pub-native.log" "$BIN/weft" pub-thr "$SIZE" -e "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --duration 110
pub=$STARTED
wait "$sub" 2>/dev/null || true
kill -TERM -- "-$pub" 2>/dev/null || true
wait "$pub" 2>/dev/null || true
annotate "$OUT/sub-thr.callgrind.out"
# The router under callgrind, publisher and subscriber native clients of it.
PORT=$((PORT + 1))
start 150 "$OUT/weftd.log" "${CG[@]}" --callgrind-out-file="$OUT/weftd.callgrind.out" \
    "$BIN/weftd" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
router=$STARTED
wait_listen "$PORT"
start 120 "$OUT/sub-routed.log" "$BIN/weft" sub-thr -m client -e "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --samples "$SAMPLES" --rounds 1 --max-seconds 90
sub=$STARTED
sleep 1
start 120 "$OUT/pub-routed.log" "$BIN/weft" pub-thr "$SIZE" -m client -e "tcp/127.0.0.1:$PORT" \
    --no-multicast-scouting --duration 100
pub=$STARTED
wait "$sub" 2>/dev/null || true
kill -TERM -- "-$pub" 2>/dev/null || true
wait "$pub" 2>/dev/null || true
# weftd stops on SIGTERM; callgrind writes its profile as it exits.
kill -TERM -- "-$router" 2>/dev/null || true
wait "$router" 2>/dev/null || true
annotate "$OUT/weftd.callgrind.out"
cat "$OUT/pub-thr.log" "$OUT/sub-thr.log" "$OUT/sub-routed.log" \
    | grep -E "sent=|median|round" >&2 || true

# The same three runs for Eclipse Zenoh, as a reference, when bench/compare and zenohd are
# built (bench/run.sh builds them). Its release builds carry no line tables (zenohd none at
# all): use these for totals and call counts (for example read_loop per message).
CT=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
ZENOHD=${ZENOHD:-$CT/zenohd-1.10.2/bin/zenohd}
if [[ -x "$CT/release/zsub_thr" && -x "$CT/release/zpub_thr" && -x "$ZENOHD" ]]; then
    Z=$CT/release
    PORT=$((PORT + 1))
    start 120 "$OUT/zsub-native.log" "$Z/zsub_thr" -l "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --samples 10000 --rounds 1000 --max-seconds 100
    sub=$STARTED
    wait_listen "$PORT"
    timeout -k 5 $((SECONDS_PUB + 60)) "${CG[@]}" --callgrind-out-file="$OUT/zpub_thr.callgrind.out" \
        "$Z/zpub_thr" "$SIZE" -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
        --duration "$SECONDS_PUB" >"$OUT/zpub_thr.log" 2>&1 || true
    kill -TERM -- "-$sub" 2>/dev/null || true
    wait "$sub" 2>/dev/null || true

    PORT=$((PORT + 1))
    start 150 "$OUT/zsub_thr.log" "${CG[@]}" --callgrind-out-file="$OUT/zsub_thr.callgrind.out" \
        "$Z/zsub_thr" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
        --samples "$SAMPLES" --rounds 1 --max-seconds 90
    sub=$STARTED
    wait_listen "$PORT"
    start 120 "$OUT/zpub-native.log" "$Z/zpub_thr" "$SIZE" -e "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --duration 110
    pub=$STARTED
    wait "$sub" 2>/dev/null || true
    kill -TERM -- "-$pub" 2>/dev/null || true
    wait "$pub" 2>/dev/null || true

    PORT=$((PORT + 1))
    start 150 "$OUT/zenohd.log" "${CG[@]}" --callgrind-out-file="$OUT/zenohd.callgrind.out" \
        "$ZENOHD" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    router=$STARTED
    wait_listen "$PORT"
    start 120 "$OUT/zsub-routed.log" "$Z/zsub_thr" -m client -e "tcp/127.0.0.1:$PORT" \
        --no-multicast-scouting --samples "$SAMPLES" --rounds 1 --max-seconds 90
    sub=$STARTED
    sleep 1
    start 120 "$OUT/zpub-routed.log" "$Z/zpub_thr" "$SIZE" -m client -e "tcp/127.0.0.1:$PORT" \
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
