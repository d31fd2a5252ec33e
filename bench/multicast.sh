#!/usr/bin/env bash
# One-way latency (half the round trip, p50 and p99) of small samples over a UDP multicast
# group, weft against Eclipse Zenoh 1.10.2: `weft ping`/`weft pong` and bench/compare's
# zping/zpong, each pair in two network namespaces of their own joined by a veth pair
# (10.81.0.1 and 10.81.0.2, a multicast route on the veth), both members of
# udp/224.0.0.224:17451#iface=<veth>. Multicast never leaves the namespaces; they are
# removed at exit. Needs root and iproute2.
#
# Usage: bench/multicast.sh [--size BYTES] [--samples N] [--runs N]
#   --size     payload in bytes (default 64)
#   --samples  measured round trips per run (default 2000)
#   --runs     runs of each system, alternated (default 3)
#
# Environment: WEFT_BIN (default target/release/weft, built if missing), ZPING_BIN and
# ZPONG_BIN (default: built from bench/compare in COMPARE_TARGET_DIR, target/compare).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source bench/lib.sh

SIZE=64 SAMPLES=2000 RUNS=3
while [[ $# -gt 0 ]]; do
    case $1 in
        --size) SIZE=$2; shift 2 ;;
        --samples) SAMPLES=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        *) log "usage: bench/multicast.sh [--size BYTES] [--samples N] [--runs N]"; exit 2 ;;
    esac
done

[[ $(id -u) == 0 ]] || { log "bench/multicast.sh: needs root (network namespaces)"; exit 2; }

WEFT_BIN=${WEFT_BIN:-target/release/weft}
if [[ ! -x $WEFT_BIN ]]; then
    cargo build --release -p weft-cli
fi
COMPARE_TARGET_DIR=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
if [[ -z ${ZPING_BIN:-} || -z ${ZPONG_BIN:-} ]]; then
    (cd bench/compare && CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build --release --bin zping --bin zpong)
    ZPING_BIN=$COMPARE_TARGET_DIR/release/zping
    ZPONG_BIN=$COMPARE_TARGET_DIR/release/zpong
fi

WORK=$(mktemp -d)
OUT_DIR=$WORK
NS=(wbmc0-$$ wbmc1-$$)
DEV=(wbmv0-$$ wbmv1-$$)
remove_namespaces() { for ns in "${NS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done; }
trap 'remove_namespaces; cleanup' EXIT
for i in 0 1; do
    ip netns add "${NS[$i]}"
    ip -n "${NS[$i]}" link set lo up
done
ip link add "${DEV[0]}" netns "${NS[0]}" type veth peer name "${DEV[1]}" netns "${NS[1]}"
for i in 0 1; do
    ip -n "${NS[$i]}" addr add "10.81.0.$((i + 1))/24" dev "${DEV[$i]}"
    ip -n "${NS[$i]}" link set "${DEV[$i]}" up
    ip -n "${NS[$i]}" route add 224.0.0.0/4 dev "${DEV[$i]}"
done
group() { echo "udp/224.0.0.224:17451#iface=${DEV[$1]}"; }

# one SYSTEM: one ping/pong run, prints the ping's `p50_us=… p99_us=…` line.
one() {
    local ping pong
    case $1 in
        weft) ping=$WEFT_BIN pong=$WEFT_BIN ;;
        zenoh) ping=$ZPING_BIN pong=$ZPONG_BIN ;;
    esac
    local pong_args=(-l "$(group 1)" --no-multicast-scouting)
    local ping_args=(-l "$(group 0)" --no-multicast-scouting --samples "$SAMPLES")
    if [[ $1 == weft ]]; then
        pong_args=(pong "${pong_args[@]}")
        ping_args=(ping "$SIZE" "${ping_args[@]}")
    else
        ping_args=("$SIZE" "${ping_args[@]}")
    fi
    start pong 120 ip netns exec "${NS[1]}" "$pong" "${pong_args[@]}"
    local pong_pid=$STARTED
    sleep 1
    ip netns exec "${NS[0]}" timeout 120 "$ping" "${ping_args[@]}" | grep p50_us
    stop "$pong_pid"
}

log "bench/multicast.sh: ${SIZE} B, ${SAMPLES} round trips per run, $RUNS runs each"
for r in $(seq 1 "$RUNS"); do
    for system in weft zenoh; do
        printf '%s run %d: %s\n' "$system" "$r" "$(one $system)"
    done
done
