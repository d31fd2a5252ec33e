#!/usr/bin/env bash
# What the QUIC link's edge runtime costs, weft against weft: the same programs over tcp/
# (the reference), tls/ (encrypted, on the I/O threads) and quic/ (quinn on its own tokio
# thread, bridged to the I/O threads through a Unix socket pair), peer to peer on loopback.
#   - latency: 64 B ping-pong (`weft ping`/`pong`, express, block), 5000 round trips; p50
#     and p99 one way, the median of BENCH_LAT_RUNS runs with fresh processes;
#   - throughput: `weft sub-thr`/`pub-thr`, congestion control block, 8 B and 1 KiB, the
#     median of BENCH_ROUNDS rounds;
#   - threads: the subscriber's threads by name while it receives, and the CPU time
#     (user + system) the subscriber and the publisher spent in the run (sampled every
#     0.1 s while the subscriber runs, so the last tenth of a second may be missing).
# Needs no Zenoh build (bench/tls.sh compares with Zenoh). Prints a table; writes nothing.
#
# Environment (all optional):
#   BENCH_PORT       first port used on 127.0.0.1 (default 18700)
#   BENCH_ROUNDS     rounds per throughput point (default 5)
#   BENCH_LAT_RUNS   latency runs per point (default 3)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

PORT=${BENCH_PORT:-18700}
ROUNDS=${BENCH_ROUNDS:-5}
LAT_RUNS=${BENCH_LAT_RUNS:-3}
PROTOCOLS=(tcp tls quic)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-quic-bench.XXXXXX")
OUT_DIR=$WORK

log "== building weft"
cargo build --release -p weft-cli --bin weft
WEFT=${CARGO_TARGET_DIR:-$ROOT/target}/release/weft

sh crates/weftd/secure/make-certs.sh "$WORK/certs" >/dev/null
cat >"$WORK/listen.json5" <<EOF
{ transport: { link: { tls: {
    root_ca_certificate: "$WORK/certs/ca.pem",
    listen_certificate: "$WORK/certs/router.pem",
    listen_private_key: "$WORK/certs/router-key.pem",
} } } }
EOF
cat >"$WORK/connect.json5" <<EOF
{ transport: { link: { tls: { root_ca_certificate: "$WORK/certs/ca.pem" } } } }
EOF

# ends PROTOCOL: LISTEN_END and CONNECT_END on a fresh port (the connecting side names
# `localhost`, as the listener's certificate does; tcp/ keeps the address).
ends() {
    local host=localhost
    [[ $1 == tcp ]] && host=127.0.0.1
    PORT=$((PORT + 1))
    LISTEN_END=(-l "$1/127.0.0.1:$PORT" -c "$WORK/listen.json5")
    CONNECT_END=(-e "$1/$host:$PORT" -c "$WORK/connect.json5")
}

# ready PROTOCOL: the listener is up (a QUIC listener has no TCP port to watch: a second).
ready() {
    if [[ $1 == quic ]]; then sleep 1; else wait_listen "$PORT" || true; fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int(NR / 2) + 1] }'; }

# cpu PID: user + system CPU seconds of process PID so far.
cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo -
}

# names PID: its threads' names, counted ("weft-io-0 weft-io-1 weft-quic ...").
names() {
    cat /proc/"$1"/task/*/comm 2>/dev/null | sort | uniq -c | awk '{ printf "%s%s", (NR > 1 ? ", " : ""), ($1 > 1 ? $2 " ×" $1 : $2) }'
}

# child PID: the program `start` ran under `timeout` as PID (waits for it, 5 s at most).
child() {
    local i c=""
    for i in $(seq 100); do
        c=$(pgrep -P "$1" | head -1 || true)
        [[ -n $c ]] && break
        sleep 0.05
    done
    echo "$c"
}

# thr PROTOCOL SIZE: sets THR_RATE, THR_THREADS (the subscriber's, while it receives) and
# THR_CPU ("sub/pub" CPU seconds, up to the subscriber's last round, sampled every 0.1 s).
thr() {
    local proto=$1 size=$2 samples=1000000
    [[ $size -gt 8 ]] && samples=300000
    ends "$proto"
    start sub 70 "$WEFT" sub-thr "${LISTEN_END[@]}" --no-multicast-scouting \
        --samples "$samples" --rounds "$ROUNDS" --max-seconds 40
    local sub_pid=$STARTED sub_prog
    sub_prog=$(child "$sub_pid")
    ready "$proto"
    start pub 70 "$WEFT" pub-thr "$size" "${CONNECT_END[@]}" --no-multicast-scouting --duration 60
    local pub_pid=$STARTED pub_prog sub_cpu=- pub_cpu=- seen
    pub_prog=$(child "$pub_pid")
    THR_THREADS=-
    while kill -0 "$sub_prog" 2>/dev/null; do
        seen=$(names "$sub_prog")
        [[ -n $seen ]] && THR_THREADS=$seen
        sub_cpu=$(cpu "$sub_prog")
        pub_cpu=$(cpu "$pub_prog")
        sleep 0.1
    done
    THR_CPU="$sub_cpu/$pub_cpu"
    thr_collect "$sub_pid" "$pub_pid" "$proto $size B"
    log "  $proto $size B: $THR_RATE msgs/s; CPU s sub/pub $THR_CPU; subscriber threads: $THR_THREADS"
}

# lat PROTOCOL: sets LAT_P50 and LAT_P99 (µs one way), the medians over LAT_RUNS runs.
lat() {
    local proto=$1 runs=() i
    for i in $(seq "$LAT_RUNS"); do
        ends "$proto"
        start pong 120 "$WEFT" pong "${LISTEN_END[@]}" --no-multicast-scouting
        local pong_pid=$STARTED
        ready "$proto"
        start ping 90 "$WEFT" ping 64 "${CONNECT_END[@]}" --no-multicast-scouting --samples 5000
        local ping_pid=$STARTED
        wait "$ping_pid" 2>/dev/null || true
        stop "$ping_pid"
        stop "$pong_pid"
        local p50 p99
        p50=$(sed -n 's/^p50_us=\([0-9.]*\) .*/\1/p' "$WORK/ping.out" | tail -1)
        p99=$(sed -n 's/.* p99_us=\([0-9.]*\).*/\1/p' "$WORK/ping.out" | tail -1)
        if [[ -n "$p50" && -n "$p99" ]]; then runs+=("$p50 $p99"); fi
    done
    LAT_P50=- LAT_P99=-
    if ((${#runs[@]} > 0)); then
        LAT_P50=$(printf '%s\n' "${runs[@]}" | awk '{ print $1 }' | median)
        LAT_P99=$(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | median)
    fi
    log "  $proto 64 B: p50 $LAT_P50 µs, p99 $LAT_P99 µs one way"
}

log "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
ROWS=()
for proto in "${PROTOCOLS[@]}"; do
    lat "$proto"
    p50=$LAT_P50 p99=$LAT_P99
    thr "$proto" 8
    r8=$THR_RATE c8=$THR_CPU
    thr "$proto" 1024
    r1k=$THR_RATE c1k=$THR_CPU
    ROWS+=("| $proto | $p50 | $p99 | $r8 ($c8) | $r1k ($c1k) | $THR_THREADS |")
done
echo
echo "Measured by \`bench/quic_edge.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), weft at \`$(git rev-parse --short HEAD)\`, $(nproc) cores; load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "Latency one way, 64 B; throughput in messages per second, with the CPU seconds the subscriber and the publisher spent on $ROUNDS rounds of 1,000,000 (8 B) or 300,000 (1 KiB) messages."
echo
echo "| Link | p50 µs | p99 µs | 8 B msg/s (CPU s sub/pub) | 1 KiB msg/s (CPU s sub/pub) | subscriber's threads |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
