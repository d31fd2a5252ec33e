#!/usr/bin/env bash
# weft-pico speed: the C client (pico/examples z_pub_thr, z_ping, z_pong) beside the Rust
# client (weft pub-thr, ping, pong), both clients of the same weftd on 127.0.0.1.
#
#   throughput, messages/s received by a Rust `weft sub-thr` on test/thr (congestion
#   control block), for 8 B, 64 B and 1 KiB payloads:
#     rust          weft pub-thr                 (the reference; it batches by itself)
#     pico          z_pub_thr, the default: automatic batching (the lease task writes
#                   while the application puts)
#     pico-express  z_pub_thr -x 1: an express publisher, every put sent at once, alone
#     pico-batch    z_pub_thr -b N: manual batching, zp_batch_start, zp_batch_flush every
#                   N puts
#     pico-16k      z_pub_thr, automatic batching, from a build with 16 KiB batches
#                   (-DZ_BATCH_UNICAST_SIZE=16384) instead of the default 2 KiB sized for
#                   microcontrollers
#   and, for 8 B, the pico publisher alone (no subscriber: the router reads and drops), as
#   counted by the publisher itself (the Rust client sends nothing without a subscriber);
#   latency, 64 B ping-pong on test/ping / test/pong (express): weft ping/pong against
#   z_ping/z_pong; one way = round trip / 2, p50 and p99.
#
# Every throughput figure is the median of BENCH_PICO_RUNS runs (fresh processes), each run
# the median of 5 rounds of the subscriber; latency p50/p99 are medians over the runs.
# Every process runs under `timeout`; every loop is bounded in count and time.
# Prints a Markdown table (the "weft-pico speed" section of bench/RESULTS.md).
#
# Environment (all optional):
#   BENCH_PICO_RUNS     runs per point (default 3)
#   BENCH_PICO_BATCH    flush period N of the batched publisher (default 1000 puts)
#   BENCH_PING_SAMPLES  measured round trips per latency run (default 5000)
#   BENCH_NO_BUILD=1    use the binaries already built
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
RUNS=${BENCH_PICO_RUNS:-3}
BATCH=${BENCH_PICO_BATCH:-1000}
PING_SAMPLES=${BENCH_PING_SAMPLES:-5000}
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
PICO_BUILD=$ROOT/pico/build-bench
PICO_BUILD_16K=$ROOT/pico/build-bench-16k
SIZES=(8 64 1024)

if [[ "${BENCH_NO_BUILD:-0}" != 1 ]]; then
    log "== building weftd, weft (release) and the weft-pico examples (Release)"
    cargo build --release -q -p weftd -p weft-cli
    cmake -S pico -B "$PICO_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_PICO_TESTS=OFF >/dev/null
    cmake --build "$PICO_BUILD" -j 2 >/dev/null
    cmake -S pico -B "$PICO_BUILD_16K" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_PICO_TESTS=OFF \
        -DZ_BATCH_UNICAST_SIZE=16384 >/dev/null
    cmake --build "$PICO_BUILD_16K" -j 2 --target z_pub_thr >/dev/null
fi
WEFT=$BIN/weft
WEFTD=$BIN/weftd
PX=$PICO_BUILD/examples
PX16=$PICO_BUILD_16K/examples
for b in "$WEFT" "$WEFTD" "$PX/z_pub_thr" "$PX/z_ping" "$PX/z_pong" "$PX16/z_pub_thr"; do
    [[ -x "$b" ]] || { log "missing $b"; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-pico-bench.XXXXXX")
OUT_DIR=$WORK
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int(NR / 2) + 1]; else print "-" }'; }

# ---- one router for everything, on a free loopback port --------------------------------
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ROUTER=tcp/127.0.0.1:$PORT
start router 3600 "$WEFTD" -l "$ROUTER" --no-multicast-scouting
wait_listen "$PORT" || exit 1
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "== weftd on $ROUTER (load average $LOAD_BEFORE)"
RUST_C=(-m client -e "$ROUTER" --no-multicast-scouting)

# samples SYSTEM SIZE: messages per subscriber round (a fraction of a second to ~2 s).
samples() {
    case $1:$2 in
        pico-express:*) echo 50000 ;;
        *:1024) echo 100000 ;;
        *) echo 300000 ;;
    esac
}

# thr_run SYSTEM SIZE: one run; prints the subscriber's median msgs/s ("-" if none).
thr_run() {
    local sys=$1 size=$2 pub
    start sub 40 "$WEFT" sub-thr "${RUST_C[@]}" --samples "$(samples "$sys" "$size")" --rounds 5 --max-seconds 30
    local sub_pid=$STARTED
    sleep 0.5
    case $sys in
        rust) pub=("$WEFT" pub-thr "$size" "${RUST_C[@]}" --duration 35) ;;
        pico) pub=("$PX/z_pub_thr" -e "$ROUTER" -s "$size" -t 35) ;;
        pico-express) pub=("$PX/z_pub_thr" -e "$ROUTER" -s "$size" -t 35 -x 1) ;;
        pico-batch) pub=("$PX/z_pub_thr" -e "$ROUTER" -s "$size" -t 35 -b "$BATCH") ;;
        pico-16k) pub=("$PX16/z_pub_thr" -e "$ROUTER" -s "$size" -t 35) ;;
    esac
    start pub 40 "${pub[@]}"
    thr_collect "$sub_pid" "$STARTED" "$sys $size B"
    echo "$THR_RATE"
}

# alone_run SYSTEM: 8 B publisher with no subscriber for 3 s; prints its own msgs/s.
alone_run() {
    local sys=$1 pub
    case $sys in
        pico) pub=("$PX/z_pub_thr" -e "$ROUTER" -s 8 -t 3) ;;
        pico-express) pub=("$PX/z_pub_thr" -e "$ROUTER" -s 8 -t 3 -x 1) ;;
        pico-batch) pub=("$PX/z_pub_thr" -e "$ROUTER" -s 8 -t 3 -b "$BATCH") ;;
    esac
    start alone 15 "${pub[@]}"
    wait "$STARTED" 2>/dev/null || true
    stop "$STARTED"
    sed -n 's/.* msgs_per_s=\([0-9]*\) .*/\1/p' "$WORK/alone.out" | tail -1 | grep . || echo -
}

# lat_run SYSTEM: one 64 B ping-pong run; prints "P50 P99" or nothing.
lat_run() {
    local sys=$1 pong ping
    case $sys in
        rust)
            pong=("$WEFT" pong "${RUST_C[@]}")
            ping=("$WEFT" ping 64 "${RUST_C[@]}" --samples "$PING_SAMPLES")
            ;;
        pico)
            pong=("$PX/z_pong" -e "$ROUTER" -n 90)
            ping=("$PX/z_ping" -e "$ROUTER" -s 64 -n "$PING_SAMPLES" -w 100 -t 60)
            ;;
    esac
    start pong 90 "${pong[@]}"
    local pong_pid=$STARTED
    sleep 0.5
    start ping 70 "${ping[@]}"
    local ping_pid=$STARTED
    wait "$ping_pid" 2>/dev/null || true
    stop "$ping_pid"
    stop "$pong_pid"
    sed -n 's/^p50_us=\([0-9.]*\) p99_us=\([0-9.]*\).*/\1 \2/p' "$WORK/ping.out" | tail -1
}

declare -A THR ALONE P50 P99
for size in "${SIZES[@]}"; do
    for sys in rust pico pico-express pico-batch pico-16k; do
        rates=()
        for r in $(seq "$RUNS"); do rates+=("$(thr_run "$sys" "$size")"); done
        THR[$sys:$size]=$(printf '%s\n' "${rates[@]}" | grep -v '^-$' | median)
        log "  thr $sys $size B: ${THR[$sys:$size]} msgs/s (runs: ${rates[*]})"
    done
done
ALONE[rust]=-
for sys in pico pico-express pico-batch; do
    rates=()
    for r in $(seq "$RUNS"); do rates+=("$(alone_run "$sys")"); done
    ALONE[$sys]=$(printf '%s\n' "${rates[@]}" | grep -v '^-$' | median)
    log "  publisher alone $sys 8 B: ${ALONE[$sys]} msgs/s (runs: ${rates[*]})"
done
for sys in rust pico; do
    runs=()
    for r in $(seq "$RUNS"); do
        res=$(lat_run "$sys")
        [[ -n "$res" ]] && runs+=("$res")
    done
    P50[$sys]=$(printf '%s\n' "${runs[@]}" | awk 'NF { print $1 }' | median)
    P99[$sys]=$(printf '%s\n' "${runs[@]}" | awk 'NF { print $2 }' | median)
    log "  lat $sys 64 B: p50 ${P50[$sys]} us, p99 ${P99[$sys]} us (runs: $(IFS=,; echo "${runs[*]}"))"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ------------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f×", a / b }'; }
fmt() { awk -v a="$1" 'BEGIN { if (a == "-") { print "-"; exit } s = sprintf("%d", a); o = ""
    while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'; }
echo
echo "Measured by \`bench/pico.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; weft at commit \`$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\`; load average before $LOAD_BEFORE, after $LOAD_AFTER; $RUNS runs per point, batched publisher flushing every $BATCH puts."
echo
echo "| Payload | Rust client msg/s | pico msg/s (automatic batching) | pico express msg/s | pico manual batching msg/s | pico 16 KiB batches msg/s | pico / Rust | manual / Rust | manual / express | 16 KiB / Rust |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in "${SIZES[@]}"; do
    r=${THR[rust:$size]} p=${THR[pico:$size]} x=${THR[pico-express:$size]} b=${THR[pico-batch:$size]}
    k=${THR[pico-16k:$size]}
    label="$size B"
    [[ $size == 1024 ]] && label="1 KiB"
    echo "| $label | $(fmt "$r") | $(fmt "$p") | $(fmt "$x") | $(fmt "$b") | $(fmt "$k") | $(ratio "$p" "$r") | $(ratio "$b" "$r") | $(ratio "$b" "$x") | $(ratio "$k" "$r") |"
done
p=${ALONE[pico]} x=${ALONE[pico-express]} b=${ALONE[pico-batch]}
echo "| 8 B, publisher alone (no subscriber) | n/a | $(fmt "$p") | $(fmt "$x") | $(fmt "$b") | | | | $(ratio "$b" "$x") | |"
echo
echo "| 64 B, one way | Rust client µs | pico µs | pico / Rust |"
echo "|---|---|---|---|"
echo "| p50 | ${P50[rust]} | ${P50[pico]} | $(ratio "${P50[pico]}" "${P50[rust]}") |"
echo "| p99 | ${P99[rust]} | ${P99[pico]} | $(ratio "${P99[pico]}" "${P99[rust]}") |"
