#!/usr/bin/env bash
# weft beside Eclipse Zenoh 1.10.2 over secured links, on loopback, over tcp/ (the
# reference), tls/ and quic/ endpoints. Both use the same certificates (made with openssl
# by crates/weftd/secure/make-certs.sh) and the same configuration files, with Zenoh's
# keys: the listener presents its certificate, the connecting side checks it against the
# CA.
#   - peer to peer throughput: `weft sub-thr`/`pub-thr` against bench/compare's
#     `zsub_thr`/`zpub_thr`, congestion control block, median of the rounds; 8 B, 1 KiB
#     and 64 KiB;
#   - routed throughput: the same programs, both clients of a router (weftd / zenohd)
#     listening on the secured endpoint;
#   - latency: 64 B ping-pong peer to peer (`weft ping`/`pong` against `zping`/`zpong`),
#     p50 and p99 one way, the median of BENCH_LAT_RUNS runs;
#   - session establishment: weft-testkit's `open_clients` opens BENCH_SESSIONS client
#     sessions (from 8 threads) to a router over tls/ (weftd / zenohd): sessions per second.
# Prints the tables and writes the "TLS and QUIC" section of bench/RESULTS.md.
#
# Environment (all optional):
#   COMPARE_TARGET_DIR  cargo target directory of bench/compare (default target/compare)
#   ZENOHD              a zenohd 1.10.2 binary (default: the one bench/run.sh installs)
#   BENCH_PORT          first port used on 127.0.0.1 (default 18500)
#   BENCH_ROUNDS        rounds per throughput point (default 5)
#   BENCH_LAT_RUNS      latency runs per point (default 3)
#   BENCH_SESSIONS      sessions opened per establishment run (default 500)
#   BENCH_NO_WRITE=1    print the tables without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

COMPARE_TARGET_DIR=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
PORT=${BENCH_PORT:-18500}
ROUNDS=${BENCH_ROUNDS:-5}
LAT_RUNS=${BENCH_LAT_RUNS:-3}
SESSIONS=${BENCH_SESSIONS:-500}
SIZES=(8 1024 65536)
PROTOCOLS=(tcp tls quic)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-tls-bench.XXXXXX")
OUT_DIR=$WORK

log "== building weft and bench/compare (Zenoh with TLS and QUIC)"
cargo build --release -p weft-cli -p weftd -p weft-testkit --bin weft --bin weftd --bin open_clients
CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build --release --manifest-path bench/compare/Cargo.toml
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
WEFT=$BIN/weft
C=$COMPARE_TARGET_DIR/release
ZENOHD=${ZENOHD:-$COMPARE_TARGET_DIR/zenohd-1.10.2/bin/zenohd}
if [[ ! -x "$ZENOHD" ]]; then
    log "no zenohd at $ZENOHD: run bench/run.sh once (it installs one) or set ZENOHD"
    exit 1
fi
need=$((SESSIONS + 200))
if (($(ulimit -Sn) < need)); then
    ulimit -Sn "$need" 2>/dev/null || { log "ulimit -Sn $need refused"; exit 1; }
fi

log "== certificates"
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

# Messages per round: about a second's worth for the slower of the two.
samples_for() {
    case $1 in
        8) echo 1000000 ;;
        1024) echo 300000 ;;
        *) echo 10000 ;;
    esac
}

# ends PROTOCOL [ROUTER_PORT]: the endpoint flags of the listening side (LISTEN_END: the
# subscriber, or pong) and of the connecting one (CONNECT_END), on a fresh port peer to
# peer, both clients of the router on ROUTER_PORT otherwise. The connecting side names the
# host `localhost`, as in the listener's certificate (tcp/ keeps the address).
ends() {
    local proto=$1 router=${2:-} host=localhost
    [[ $proto == tcp ]] && host=127.0.0.1
    if [[ -z $router ]]; then
        PORT=$((PORT + 1))
        LISTEN_END=(-l "$proto/127.0.0.1:$PORT" -c "$WORK/listen.json5")
        CONNECT_END=(-e "$proto/$host:$PORT" -c "$WORK/connect.json5")
    else
        LISTEN_END=(-m client -e "$proto/$host:$router" -c "$WORK/connect.json5")
        CONNECT_END=("${LISTEN_END[@]}")
    fi
}

# ready PROTOCOL [ROUTER_PORT]: waits for the listening side of a peer-to-peer run (a QUIC
# listener has no TCP port to watch: a second), or for a client to have joined the router.
ready() {
    if [[ -n ${2:-} ]]; then sleep 0.5
    elif [[ $1 == quic ]]; then sleep 1
    else wait_listen "$PORT" || true; fi
}

# thr SYSTEM PROTOCOL SIZE [ROUTER_PORT]: sets THR_RATE.
thr() {
    local sys=$1 proto=$2 size=$3 router=${4:-} samples
    samples=$(samples_for "$size")
    ends "$proto" "$router"
    local common=(--samples "$samples" --rounds "$ROUNDS" --max-seconds 40)
    local sub pub
    case $sys in
        weft)
            sub=("$WEFT" sub-thr "${LISTEN_END[@]}" --no-multicast-scouting "${common[@]}")
            pub=("$WEFT" pub-thr "$size" "${CONNECT_END[@]}" --no-multicast-scouting --duration 60)
            ;;
        zenoh)
            sub=("$C/zsub_thr" "${LISTEN_END[@]}" --no-multicast-scouting "${common[@]}")
            pub=("$C/zpub_thr" "$size" "${CONNECT_END[@]}" --no-multicast-scouting --duration 60)
            ;;
    esac
    start sub 70 "${sub[@]}"
    local sub_pid=$STARTED
    ready "$proto" "$router"
    start pub 70 "${pub[@]}"
    thr_collect "$sub_pid" "$STARTED" "$proto $sys $size B${router:+ routed}"
    log "  $proto $sys $size B${router:+ routed}: $THR_RATE msgs/s"
}

# lat_run SYSTEM PROTOCOL: one 64 B ping-pong run, fresh processes; sets LAT_RESULT to
# "P50 P99" in microseconds one way (empty on failure).
lat_run() {
    local sys=$1 proto=$2 pong ping
    ends "$proto"
    case $sys in
        weft)
            pong=("$WEFT" pong "${LISTEN_END[@]}" --no-multicast-scouting)
            ping=("$WEFT" ping 64 "${CONNECT_END[@]}" --no-multicast-scouting --samples 5000)
            ;;
        zenoh)
            pong=("$C/zpong" "${LISTEN_END[@]}" --no-multicast-scouting --max-seconds 120)
            ping=("$C/zping" 64 "${CONNECT_END[@]}" --no-multicast-scouting --samples 5000)
            ;;
    esac
    start pong 120 "${pong[@]}"
    local pong_pid=$STARTED
    ready "$proto"
    start ping 90 "${ping[@]}"
    local ping_pid=$STARTED
    wait "$ping_pid" 2>/dev/null || true
    stop "$ping_pid"
    stop "$pong_pid"
    local p50 p99
    p50=$(sed -n 's/^p50_us=\([0-9.]*\) .*/\1/p' "$WORK/ping.out" | tail -1)
    p99=$(sed -n 's/.* p99_us=\([0-9.]*\).*/\1/p' "$WORK/ping.out" | tail -1)
    LAT_RESULT=""
    if [[ -n "$p50" && -n "$p99" ]]; then
        LAT_RESULT="$p50 $p99"
    else
        log "  $proto lat $sys: a run gave no result"
        sed 's/^/    ping: /' "$WORK/ping.out" | tail -5 >&2
    fi
}

# median of the numbers on standard input (the upper one for an even count).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int(NR / 2) + 1] }'; }

# lat SYSTEM PROTOCOL: sets LAT_P50 and LAT_P99, the medians over BENCH_LAT_RUNS runs.
lat() {
    local runs=() i
    for i in $(seq "$LAT_RUNS"); do
        lat_run "$@"
        if [[ -n "$LAT_RESULT" ]]; then runs+=("$LAT_RESULT"); fi
    done
    LAT_P50=- LAT_P99=-
    if ((${#runs[@]} > 0)); then
        LAT_P50=$(printf '%s\n' "${runs[@]}" | awk '{ print $1 }' | median)
        LAT_P99=$(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | median)
    fi
    log "  $2 lat $1 64 B: p50 $LAT_P50 us, p99 $LAT_P99 us"
}

# router SYSTEM PROTOCOL: starts weftd or zenohd listening on PROTOCOL (on a fresh port,
# ROUTER_PORT), with the listener's TLS settings; sets ROUTER_PID.
router() {
    local sys=$1 proto=$2
    PORT=$((PORT + 1))
    ROUTER_PORT=$PORT
    local args=(-c "$WORK/listen.json5" -l "$proto/127.0.0.1:$PORT" --no-multicast-scouting)
    if [[ $sys == weft ]]; then
        start "router-$sys" 600 "$BIN/weftd" "${args[@]}"
    else
        start "router-$sys" 600 "$ZENOHD" "${args[@]}"
    fi
    ROUTER_PID=$STARTED
    if [[ $proto == quic ]]; then sleep 1; else wait_listen "$PORT"; fi
}

# sessions_per_s SYSTEM: opens SESSIONS clients to a router over tls/; sets SESSION_RATE.
sessions_per_s() {
    router "$1" tls
    start clients 120 "$BIN/open_clients" "$WORK/connect.json5" "tls/localhost:$ROUTER_PORT" \
        "$SESSIONS" 8
    local clients=$STARTED
    wait "$clients" 2>/dev/null || true
    local seconds
    seconds=$(sed -n 's/^opened=[0-9]* seconds=\([0-9.]*\)/\1/p' "$WORK/clients.out")
    SESSION_RATE=-
    if [[ -n "$seconds" ]]; then
        SESSION_RATE=$(awk -v n="$SESSIONS" -v s="$seconds" 'BEGIN { printf "%d", n / s }')
    else
        sed 's/^/    open_clients: /' "$WORK/clients.out" | tail -3 >&2
    fi
    stop "$ROUTER_PID"
    log "  tls sessions $1: $SESSION_RATE sessions/s"
}

# num N: N with thousands separators ("-" stays).
num() {
    if [[ $1 == - ]]; then echo -; else python3 -c "print(f'{int($1):,}')"; fi
}

ratio() {
    if [[ $1 == - || $2 == - ]]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; fi
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
log "== peer to peer"
for proto in "${PROTOCOLS[@]}"; do
    for size in "${SIZES[@]}"; do
        thr weft "$proto" "$size"
        w=$THR_RATE
        thr zenoh "$proto" "$size"
        z=$THR_RATE
        ROWS+=("| $proto | $size B | $(num "$w") | $(num "$z") | $(ratio "$w" "$z") |")
    done
done

log "== routed"
ROUTED=()
for proto in "${PROTOCOLS[@]}"; do
    declare -A rate=()
    for sys in weft zenoh; do
        router "$sys" "$proto"
        for size in "${SIZES[@]}"; do
            thr "$sys" "$proto" "$size" "$ROUTER_PORT"
            rate[$sys-$size]=$THR_RATE
        done
        stop "$ROUTER_PID"
    done
    for size in "${SIZES[@]}"; do
        w=${rate[weft-$size]} z=${rate[zenoh-$size]}
        ROUTED+=("| $proto | $size B | $(num "$w") | $(num "$z") | $(ratio "$w" "$z") |")
    done
    unset rate
done

log "== latency"
LATENCY=()
for proto in "${PROTOCOLS[@]}"; do
    lat weft "$proto"
    wp50=$LAT_P50 wp99=$LAT_P99
    lat zenoh "$proto"
    LATENCY+=("| $proto | $wp50 | $LAT_P50 | $(ratio "$wp50" "$LAT_P50") | $wp99 | $LAT_P99 | $(ratio "$wp99" "$LAT_P99") |")
done

log "== session establishment"
sessions_per_s weft
ws=$SESSION_RATE
sessions_per_s zenoh
zs=$SESSION_RATE

SECTION=$WORK/section.md
{
    echo "## TLS and QUIC"
    echo
    echo "Measured by \`bench/tls.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, Linux $(uname -r); weft at commit \`$(git rev-parse --short HEAD)\`, Eclipse Zenoh 1.10.2 (the \`zenoh\` crate with the TCP, TLS and QUIC links; \`zenohd\` from \`cargo install zenohd --version 1.10.2 --locked\`). Load average before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "The same certificates (an ECDSA P-256 CA and listener certificate made with openssl) and the same configuration files with Zenoh's keys for both: the listener presents its certificate, the connecting side verifies it against the CA (no client certificate). tcp/ is the reference."
    echo
    echo "Peer to peer on loopback, the subscriber listening, the publisher connecting (both in peer mode, multicast scouting off). Messages received per second on \`test/thr\` (congestion control block), the median of $ROUNDS rounds."
    echo
    echo "| Link | Payload | weft msg/s | Zenoh msg/s | weft/Zenoh |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "Routed: publisher and subscriber both clients of one router (weftd / zenohd 1.10.2, on their defaults) listening on the link, the same programs."
    echo
    echo "| Link | Payload | weftd msg/s | zenohd msg/s | weft/Zenoh |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${ROUTED[@]}"
    echo
    echo "Latency, peer to peer: 64 B samples echoed (express, block), 5000 round trips; one way = round trip / 2, in µs; p50 and p99 are each the median of $LAT_RUNS runs with fresh processes."
    echo
    echo "| Link | weft p50 | Zenoh p50 | weft/Zenoh | weft p99 | Zenoh p99 | weft/Zenoh |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${LATENCY[@]}"
    echo
    echo "Session establishment over tls/: weft-testkit's \`open_clients\` opens $SESSIONS client sessions (8 threads, each opening its share one after the other, the same weft clients for both routers) to a router listening on tls/: weftd $(num "$ws") sessions/s, zenohd $(num "$zs") sessions/s ($(ratio "$ws" "$zs"))."
} >"$SECTION"
cat "$SECTION"
if [[ -z "${BENCH_NO_WRITE:-}" ]]; then
    write_section "TLS and QUIC" "$SECTION"
fi
