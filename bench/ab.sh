#!/usr/bin/env bash
# Alternated before/after runs of two weft builds on TCP loopback: throughput (peer to peer
# and routed) at a few sizes and 64 B ping-pong latency, each point run by both builds in
# turn, BENCH_RUNS times. For a change of the data path: a build's speed moves with the
# machine's, so two builds are compared only in alternated runs.
#
# Usage: bench/ab.sh BEFORE_BIN_DIR AFTER_BIN_DIR
#   each directory holds release `weft` and `weftd` binaries (target/release of a checkout).
# Environment: BENCH_RUNS (default 3), BENCH_SIZES (default "8 1024 65536 1048576"),
#   BENCH_SECONDS (seconds per throughput run, default 4), BENCH_PORT (default 18700),
#   BENCH_TOPOLOGIES (default "peer routed"), BENCH_LINK (tcp, the default, tls or quic:
#   the certificates of crates/weftd/secure/make-certs.sh, the connecting side checking
#   the listener's against the CA, as bench/tls.sh does).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

if (($# != 2)); then
    echo "usage: bench/ab.sh BEFORE_BIN_DIR AFTER_BIN_DIR" >&2
    exit 2
fi
BUILDS=("$1" "$2")
NAMES=(before after)
for b in "${BUILDS[@]}"; do
    for bin in weft weftd; do
        if [[ ! -x "$b/$bin" ]]; then
            echo "error: $b/$bin is not an executable" >&2
            exit 2
        fi
    done
done
RUNS=${BENCH_RUNS:-3}
read -r -a SIZES <<<"${BENCH_SIZES:-8 1024 65536 1048576}"
read -r -a TOPOLOGIES <<<"${BENCH_TOPOLOGIES:-peer routed}"
SECONDS_PER_RUN=${BENCH_SECONDS:-4}
PORT=${BENCH_PORT:-18700}
OUT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/weft-ab.XXXXXX")
RESULTS=$OUT_DIR/results.tsv
: >"$RESULTS"
LINK=${BENCH_LINK:-tcp}
HOST=127.0.0.1
LISTEN_CFG=()
CONNECT_CFG=()
case $LINK in
    tcp) ;;
    tls | quic)
        sh "$ROOT/crates/weftd/secure/make-certs.sh" "$OUT_DIR/certs" >/dev/null
        cat >"$OUT_DIR/listen.json5" <<EOF
{ transport: { link: { tls: {
    root_ca_certificate: "$OUT_DIR/certs/ca.pem",
    listen_certificate: "$OUT_DIR/certs/router.pem",
    listen_private_key: "$OUT_DIR/certs/router-key.pem",
} } } }
EOF
        cat >"$OUT_DIR/connect.json5" <<EOF
{ transport: { link: { tls: { root_ca_certificate: "$OUT_DIR/certs/ca.pem" } } } }
EOF
        HOST=localhost
        LISTEN_CFG=(-c "$OUT_DIR/listen.json5")
        CONNECT_CFG=(-c "$OUT_DIR/connect.json5")
        ;;
    *)
        echo "error: BENCH_LINK is tcp, tls or quic, not $LINK" >&2
        exit 2
        ;;
esac

next_port() { PORT=$((PORT + 1)); }

# ends BIN TOPOLOGY: sets SERVER_END and CLIENT_END, starting a router for `routed`.
ends() {
    next_port
    if [[ $2 == peer ]]; then
        SERVER_END=(-l "$LINK/127.0.0.1:$PORT" "${LISTEN_CFG[@]}")
        CLIENT_END=(-e "$LINK/$HOST:$PORT" "${CONNECT_CFG[@]}")
        ROUTER=
    else
        start router 600 "$1/weftd" -l "$LINK/127.0.0.1:$PORT" "${LISTEN_CFG[@]}" \
            --no-multicast-scouting
        ROUTER=$STARTED
        listening
        SERVER_END=(-m client -e "$LINK/$HOST:$PORT" "${CONNECT_CFG[@]}")
        CLIENT_END=("${SERVER_END[@]}")
    fi
}

# listening: waits for the listener on PORT (a QUIC one has no TCP port to watch: a
# second).
listening() {
    if [[ $LINK == quic ]]; then sleep 1; else wait_listen "$PORT" || true; fi
}

# samples SIZE: messages per round (a fraction of a second at weft's speed).
samples() {
    case $1 in
        8 | 64) echo 1000000 ;;
        1024) echo 200000 ;;
        8192) echo 50000 ;;
        65536) echo 5000 ;;
        *) echo 500 ;;
    esac
}

# thr BIN TOPOLOGY SIZE: sets RATE to the subscriber's median msgs/s.
thr() {
    ends "$1" "$2"
    start sub $((SECONDS_PER_RUN * 3 + 20)) "$1/weft" sub-thr "${SERVER_END[@]}" \
        --no-multicast-scouting --samples "$(samples "$3")" --rounds 3 \
        --max-seconds "$SECONDS_PER_RUN"
    local sub=$STARTED
    if [[ $2 == peer ]]; then listening; else sleep 0.5; fi
    start pub $((SECONDS_PER_RUN * 3 + 25)) "$1/weft" pub-thr "$3" "${CLIENT_END[@]}" \
        --no-multicast-scouting --duration $((SECONDS_PER_RUN * 3 + 15))
    thr_collect "$sub" "$STARTED" "$2 $3 B"
    RATE=$THR_RATE
    if [[ -n $ROUTER ]]; then stop "$ROUTER"; fi
}

# lat BIN TOPOLOGY: sets P50 and P99 (µs) of a 64 B ping-pong.
lat() {
    ends "$1" "$2"
    start pong 60 "$1/weft" pong "${SERVER_END[@]}" --no-multicast-scouting
    local pong=$STARTED
    if [[ $2 == peer ]]; then listening; else sleep 0.5; fi
    start ping 60 "$1/weft" ping 64 "${CLIENT_END[@]}" --no-multicast-scouting --samples 5000
    wait "$STARTED" 2>/dev/null || true
    stop "$pong"
    P50=$(sed -n 's/.*p50_us=\([0-9.]*\).*/\1/p' "$OUT_DIR/ping.out" | tail -1)
    P99=$(sed -n 's/.*p99_us=\([0-9.]*\).*/\1/p' "$OUT_DIR/ping.out" | tail -1)
    if [[ -n $ROUTER ]]; then stop "$ROUTER"; fi
}

# Which build goes first alternates from run to run: the second of two back-to-back
# latency runs measures a higher p99 (about 1.2x with the same binary in both places).
for run in $(seq "$RUNS"); do
    if ((run % 2)); then ORDER=(0 1); else ORDER=(1 0); fi
    for topo in "${TOPOLOGIES[@]}"; do
        for size in "${SIZES[@]}"; do
            for i in "${ORDER[@]}"; do
                thr "${BUILDS[$i]}" "$topo" "$size"
                log "run $run $topo thr $size B ${NAMES[$i]}: $RATE msgs/s"
                printf '%s\t%s\tthr\t%s\t%s\n' "${NAMES[$i]}" "$topo" "$size" "$RATE" >>"$RESULTS"
            done
        done
        for i in "${ORDER[@]}"; do
            lat "${BUILDS[$i]}" "$topo"
            log "run $run $topo lat 64 B ${NAMES[$i]}: p50 ${P50:-?} p99 ${P99:-?} us"
            printf '%s\t%s\tlat_p50\t64\t%s\n%s\t%s\tlat_p99\t64\t%s\n' "${NAMES[$i]}" "$topo" \
                "${P50:--}" "${NAMES[$i]}" "$topo" "${P99:--}" >>"$RESULTS"
        done
    done
done

echo
echo "| topology | test | size | before (median, min-max) | after (median, min-max) | after/before |"
echo "|---|---|---|---|---|---|"
python3 - "$RESULTS" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    name, topo, test, size, value = line.rstrip("\n").split("\t")
    if value in ("-", ""):
        continue
    rows.setdefault((topo, test, int(size)), {}).setdefault(name, []).append(float(value))
for (topo, test, size), by in sorted(rows.items()):
    def fmt(v):
        if not v:
            return "-"
        return f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f})" if test == "thr" else \
            f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f})"
    b, a = by.get("before", []), by.get("after", [])
    ratio = f"{statistics.median(a) / statistics.median(b):.2f}" if a and b else "-"
    print(f"| {topo} | {test} | {size} | {fmt(b)} | {fmt(a)} | {ratio} |")
PY
