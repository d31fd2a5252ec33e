#!/usr/bin/env bash
# weft side by side with Eclipse Zenoh 1.10.2 and raw TCP, on TCP loopback:
#   peer to peer: throughput (8 B ... 1 MiB) and 64 B ping-pong latency, weft / Zenoh / raw TCP;
#   routed: both ends clients of a router (weftd / zenohd): the same, plus the router's
#   memory at rest.
# Builds what it needs, prints the tables and writes the "Peer to peer" and "Routed" sections
# of bench/RESULTS.md. Every process it starts is bounded in time and killed on exit.
#
# Environment (all optional):
#   COMPARE_TARGET_DIR   cargo target directory of bench/compare and zenohd (default target/compare)
#   ZENOHD               a zenohd 1.10.2 binary to use instead of installing one
#   BENCH_PORT           first TCP port used on 127.0.0.1 (default 17700)
#   BENCH_ROUNDS         throughput rounds per point (default 5)
#   BENCH_MAX_SECONDS    time limit of one throughput point (default 20)
#   BENCH_PING_SAMPLES   measured round trips per latency run (default 5000)
#   BENCH_LAT_RUNS       latency runs per point, fresh processes each, median kept (default 3)
#   BENCH_MAX_LOAD       wait (at most BENCH_LOAD_WAIT seconds, default 600) for the 1-minute
#                        load average to fall below this before measuring (default 1.0)
#   BENCH_NO_WRITE=1     print the tables without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

ZENOH_VERSION=1.10.2
COMPARE_TARGET_DIR=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
WEFT_BIN_DIR=${CARGO_TARGET_DIR:-$ROOT/target}/release
COMPARE_BIN_DIR=$COMPARE_TARGET_DIR/release
ZENOHD_ROOT=$COMPARE_TARGET_DIR/zenohd-$ZENOH_VERSION
ZENOHD=${ZENOHD:-$ZENOHD_ROOT/bin/zenohd}
PORT=${BENCH_PORT:-17700}
ROUNDS=${BENCH_ROUNDS:-5}
MAX_SECONDS=${BENCH_MAX_SECONDS:-20}
PING_SAMPLES=${BENCH_PING_SAMPLES:-5000}
LAT_RUNS=${BENCH_LAT_RUNS:-3}
MAX_LOAD=${BENCH_MAX_LOAD:-1.0}
LOAD_WAIT=${BENCH_LOAD_WAIT:-600}
SIZES=(8 64 1024 8192 65536 1048576)

COMMAND="bench/run.sh"
for v in COMPARE_TARGET_DIR ZENOHD BENCH_PORT BENCH_ROUNDS BENCH_MAX_SECONDS BENCH_PING_SAMPLES \
    BENCH_LAT_RUNS BENCH_MAX_LOAD BENCH_LOAD_WAIT; do
    if [[ -n "${!v:-}" && ( "$v" != ZENOHD || "${ZENOHD}" != "$ZENOHD_ROOT/bin/zenohd" ) \
        && ( "$v" != COMPARE_TARGET_DIR || "$COMPARE_TARGET_DIR" != "$ROOT/target/compare" ) ]]; then
        COMMAND="$v=${!v} $COMMAND"
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-bench.XXXXXX")
RESULTS=$WORK/results.tsv
: >"$RESULTS"
OUT_DIR=$WORK

next_port() { PORT=$((PORT + 1)); }

load1() { cut -d' ' -f1 /proc/loadavg; }

# samples_for SYSTEM SIZE: messages per round, for rounds of a fraction of a second to a
# few seconds (raw TCP moves small messages 10 to 50 times faster).
samples_for() {
    local n
    case $2 in
        8 | 64) n=1000000 ;;
        1024) n=200000 ;;
        8192) n=50000 ;;
        65536) n=5000 ;;
        *) n=500 ;;
    esac
    if [[ $1 == tcp ]]; then
        if (($2 <= 1024)); then n=$((n * 10)); else n=$((n * 4)); fi
    fi
    echo "$n"
}

record() { printf '%s\n' "$(IFS=$'\t'; echo "$*")" >>"$RESULTS"; }

# choose_ends TOPOLOGY [ROUTER_ENDPOINT]: the endpoint flags of the listening side (SERVER_END:
# subscriber or pong) and of the other (CLIENT_END): on a fresh port peer to peer, both
# clients of the router otherwise.
choose_ends() {
    if [[ $1 == peer ]]; then
        next_port
        SERVER_END=(-l "tcp/127.0.0.1:$PORT")
        CLIENT_END=(-e "tcp/127.0.0.1:$PORT")
    else
        SERVER_END=(-m client -e "$2")
        CLIENT_END=(-m client -e "$2")
    fi
}

# ---- build -------------------------------------------------------------------------------

log "== building weft (weft-cli, weftd)"
cargo build --release -p weft-cli -p weftd
log "== building bench/compare (Zenoh $ZENOH_VERSION, raw TCP)"
CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build --release --manifest-path bench/compare/Cargo.toml \
    --no-default-features --features zenoh
if [[ ! -x "$ZENOHD" ]]; then
    log "== installing zenohd $ZENOH_VERSION into $ZENOHD_ROOT"
    t0=$(date +%s)
    CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo install zenohd --version "$ZENOH_VERSION" --locked \
        --root "$ZENOHD_ROOT"
    t1=$(date +%s)
    printf 'seconds=%s load1=%s date=%s\n' "$((t1 - t0))" "$(load1)" "$(date -u +%F)" \
        >"$ZENOHD_ROOT/build-time.txt"
fi

WEFT=$WEFT_BIN_DIR/weft
WEFTD=$WEFT_BIN_DIR/weftd
C=$COMPARE_BIN_DIR
for b in "$WEFT" "$WEFTD" "$C/zpub_thr" "$C/zsub_thr" "$C/zping" "$C/zpong" "$C/tcp_thr" \
    "$C/tcp_pingpong" "$ZENOHD"; do
    [[ -x "$b" ]] || { log "missing $b"; exit 1; }
done

# ---- wait for a quiet machine ------------------------------------------------------------

waited=0
while awk -v l="$(load1)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }' && ((waited < LOAD_WAIT)); do
    ((waited % 60 == 0)) && log "load average $(load1) >= $MAX_LOAD: waiting (${waited}s of ${LOAD_WAIT}s)"
    sleep 5
    waited=$((waited + 5))
done
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "== measuring (load average $LOAD_BEFORE)"

# ---- one throughput point ----------------------------------------------------------------

# thr SYSTEM TOPOLOGY SIZE [ROUTER_ENDPOINT]: records "TOPOLOGY thr SYSTEM SIZE MSGS_PER_S".
thr() {
    local sys=$1 topo=$2 size=$3 router=${4:-} samples
    samples=$(samples_for "$sys" "$size")
    local common=(--samples "$samples" --rounds "$ROUNDS" --max-seconds "$MAX_SECONDS")
    local pub_secs=$((MAX_SECONDS + 10))
    choose_ends "$topo" "$router"
    local sub_end=("${SERVER_END[@]}") pub_end=("${CLIENT_END[@]}")
    local sub pub
    case $sys in
        weft)
            sub=("$WEFT" sub-thr "${sub_end[@]}" --no-multicast-scouting "${common[@]}")
            pub=("$WEFT" pub-thr "$size" "${pub_end[@]}" --no-multicast-scouting --duration "$pub_secs")
            ;;
        zenoh)
            sub=("$C/zsub_thr" "${sub_end[@]}" --no-multicast-scouting "${common[@]}")
            pub=("$C/zpub_thr" "$size" "${pub_end[@]}" --no-multicast-scouting --duration "$pub_secs")
            ;;
        tcp)
            sub=("$C/tcp_thr" recv -l "127.0.0.1:$PORT" "${common[@]}")
            pub=("$C/tcp_thr" send "$size" -e "127.0.0.1:$PORT" --duration "$pub_secs")
            ;;
    esac
    start sub $((MAX_SECONDS + 15)) "${sub[@]}"
    local sub_pid=$STARTED
    if [[ $topo == peer ]]; then
        wait_listen "$PORT" || true
    else
        sleep 0.5
    fi
    start pub $((pub_secs + 5)) "${pub[@]}"
    thr_collect "$sub_pid" "$STARTED" "$topo $sys $size B"
    log "  $topo thr $sys $size B: $THR_RATE msgs/s"
    record "$topo" thr "$sys" "$size" "$THR_RATE"
}

# ---- one latency point -------------------------------------------------------------------

# lat_run SYSTEM TOPOLOGY [ROUTER_ENDPOINT]: one ping-pong run with fresh processes; sets
# LAT_RESULT to "P50 P99" (empty on failure). Not run in a subshell, so that the processes it
# starts stay known to the cleanup.
lat_run() {
    local sys=$1 topo=$2 router=${3:-} size=64
    choose_ends "$topo" "$router"
    local pong_end=("${SERVER_END[@]}") ping_end=("${CLIENT_END[@]}")
    local pong ping
    case $sys in
        weft)
            pong=("$WEFT" pong "${pong_end[@]}" --no-multicast-scouting)
            ping=("$WEFT" ping "$size" "${ping_end[@]}" --no-multicast-scouting --samples "$PING_SAMPLES")
            ;;
        zenoh)
            pong=("$C/zpong" "${pong_end[@]}" --no-multicast-scouting --max-seconds 120)
            ping=("$C/zping" "$size" "${ping_end[@]}" --no-multicast-scouting --samples "$PING_SAMPLES")
            ;;
        tcp)
            pong=("$C/tcp_pingpong" pong -l "127.0.0.1:$PORT")
            ping=("$C/tcp_pingpong" ping "$size" -e "127.0.0.1:$PORT" --samples "$PING_SAMPLES")
            ;;
    esac
    start pong 120 "${pong[@]}"
    local pong_pid=$STARTED
    if [[ $topo == peer ]]; then
        wait_listen "$PORT" || true
    else
        sleep 0.5
    fi
    start ping 90 "${ping[@]}"
    local ping_pid=$STARTED
    wait "$ping_pid" 2>/dev/null || true
    stop "$ping_pid"
    stop "$pong_pid"
    local p50 p99
    p50=$(sed -n 's/^p50_us=\([0-9.]*\) .*/\1/p' "$WORK/ping.out" | tail -1)
    p99=$(sed -n 's/.* p99_us=\([0-9.]*\).*/\1/p' "$WORK/ping.out" | tail -1)
    LAT_RESULT=""
    if [[ -z "$p50" || -z "$p99" ]]; then
        log "  $topo lat $sys: a run gave no result"
        sed 's/^/    ping: /' "$WORK/ping.out" | tail -5 >&2
        sed 's/^/    pong: /' "$WORK/pong.out" | tail -5 >&2
        return 0
    fi
    LAT_RESULT="$p50 $p99"
}

# median of the numbers on standard input (the upper one for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int(NR / 2) + 1] }'; }

# lat SYSTEM TOPOLOGY [ROUTER_ENDPOINT]: BENCH_LAT_RUNS runs; records
# "TOPOLOGY lat SYSTEM 64 P50 P99", the medians over the runs.
lat() {
    local runs=() i p50 p99
    for i in $(seq "$LAT_RUNS"); do
        lat_run "$@"
        if [[ -n "$LAT_RESULT" ]]; then runs+=("$LAT_RESULT"); fi
    done
    if ((${#runs[@]} == 0)); then
        p50=- p99=-
    else
        p50=$(printf '%s\n' "${runs[@]}" | awk '{ print $1 }' | median)
        p99=$(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | median)
    fi
    log "  $2 lat $1 64 B: p50 $p50 us, p99 $p99 us (runs: $(IFS=,; echo "${runs[*]}"))"
    record "$2" lat "$1" 64 "$p50" "$p99"
}

rss_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null || true; }

# ---- peer to peer ------------------------------------------------------------------------

log "== peer to peer"
for size in "${SIZES[@]}"; do
    for sys in weft zenoh tcp; do thr "$sys" peer "$size"; done
done
for sys in weft zenoh tcp; do lat "$sys" peer; done
LOAD_MID=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- routed ------------------------------------------------------------------------------

log "== routed"
declare -A ROUTER_PID
for sys in weft zenoh; do
    next_port
    if [[ $sys == weft ]]; then
        start "router-$sys" 900 "$WEFTD" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    else
        start "router-$sys" 900 "$ZENOHD" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    fi
    # The router's own process: `timeout`'s child.
    rp=$STARTED
    wait_listen "$PORT"
    sleep 1
    child=$(pgrep -P "$rp" | head -1)
    ROUTER_PID[$sys]=$child
    rss=$(rss_kib "$child" VmRSS)
    log "  router $sys (pid $child) at rest: VmRSS ${rss:-?} KiB"
    record routed rss "$sys" 0 "${rss:--}"
    router="tcp/127.0.0.1:$PORT"
    for size in "${SIZES[@]}"; do thr "$sys" routed "$size" "$router"; done
    lat "$sys" routed "$router"
    hwm=$(rss_kib "$child" VmHWM)
    rss=$(rss_kib "$child" VmRSS)
    record routed hwm "$sys" 0 "${hwm:--}" "${rss:--}"
    log "  router $sys after the runs: VmHWM ${hwm:-?} KiB, VmRSS ${rss:-?} KiB"
    stop "$rp"
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ------------------------------------------------------------------------------

ZENOHD_BUILD=""
[[ -f "$ZENOHD_ROOT/build-time.txt" ]] && ZENOHD_BUILD=$(cat "$ZENOHD_ROOT/build-time.txt")
write=1
[[ "${BENCH_NO_WRITE:-}" == 1 ]] && write=0
python3 bench/compare/report.py \
    --results "$RESULTS" \
    --markdown bench/RESULTS.md \
    --write "$write" \
    --command "$COMMAND" \
    --date "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    --cpu "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)" \
    --cores "$(nproc)" \
    --kernel "$(uname -r)" \
    --rustc "$(rustc --version)" \
    --weft-rev "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --load-before "$LOAD_BEFORE" --load-mid "$LOAD_MID" --load-after "$LOAD_AFTER" \
    --rounds "$ROUNDS" --ping-samples "$PING_SAMPLES" --lat-runs "$LAT_RUNS" \
    --zenohd-build "$ZENOHD_BUILD"
