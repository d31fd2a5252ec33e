#!/usr/bin/env bash
# Robot net: ten weft sessions in one process (weft's `robotnet` example): nine sensors
# publish 64 B state samples at 10 kHz, a controller publishes a 64 B command to each at
# 10 kHz, and every node publishes a 100 Hz RealTime express event the controller receives.
# One-way latency per stream kind (state, command, event), peer to peer (the sensors connect
# to the listening controller, gossip meshes them) and routed (every session a client of one
# weftd on 127.0.0.1). Runs N runs per topology, fresh processes each, and prints per stream
# kind the median of the runs' p50, p99, p99.9 and max (with their min-max), the samples
# sent, received and lost over all runs, and how many ticks were published late. The
# 1-minute load average before each run is printed beside it: the figures are only
# comparable at a similar load.
#
# Usage: bench/robotnet.sh [--system weft|zenoh] [--p2p|--routed|--both] [--star] [--runs N]
#                          [--seconds S]
#   --system zenoh runs the same scenario with Eclipse Zenoh 1.10.2 instead (bench/compare's
#   zrobotnet: the same options and output; routed, every session a client of one zenohd).
#   --both (default) runs peer to peer then routed; N defaults to 5, S (measured seconds per
#   run, after the warm-up) to 4. --star: peer to peer, the sensors listen nowhere, so
#   gossip cannot mesh them (only the nine sensor-controller links, as in a build without
#   gossip).
# Exits with failure when a run fails or loses a sample.
#
# Environment (all optional):
#   BENCH_PORT      first TCP port used on 127.0.0.1 (default 18100)
#   ROBOTNET_BIN    a robotnet binary to run instead of building this tree's
#   WEFTD_BIN       a weftd binary to run instead of building this tree's
#   With --system zenoh:
#   COMPARE_TARGET_DIR  cargo target directory of bench/compare (default target/compare, as
#                   bench/compare.sh's)
#   ZROBOTNET_BIN   a zrobotnet binary to run instead of building bench/compare's
#   ZENOHD          the zenohd 1.10.2 (release) for the routed runs (default the one
#                   bench/compare.sh installs, COMPARE_TARGET_DIR/zenohd-1.10.2/bin/zenohd;
#                   bench/compare's zrouter, a zenoh session in router mode, stands in)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

usage() {
    log "usage: bench/robotnet.sh [--system weft|zenoh] [--p2p|--routed|--both] [--star]" \
        "[--runs N] [--seconds S]"
    exit 2
}

TOPOLOGIES=(p2p routed)
RUNS=5
RUN_SECONDS=4
STAR=()
SYSTEM=weft
while (($#)); do
    case $1 in
        --system)
            [[ ${2:-} == weft || ${2:-} == zenoh ]] || usage
            SYSTEM=$2
            shift
            ;;
        --p2p) TOPOLOGIES=(p2p) ;;
        --routed) TOPOLOGIES=(routed) ;;
        --both) TOPOLOGIES=(p2p routed) ;;
        --star) STAR=(--star) ;;
        --runs)
            [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage
            RUNS=$2
            shift
            ;;
        --seconds)
            [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage
            RUN_SECONDS=$2
            shift
            ;;
        *) usage ;;
    esac
    shift
done

PORT=${BENCH_PORT:-18100}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-robotnet.XXXXXX")
OUT_DIR=$WORK
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
ROUTED=0
[[ " ${TOPOLOGIES[*]} " == *" routed "* ]] && ROUTED=1

if [[ $SYSTEM == weft ]]; then
    ROBOTNET=${ROBOTNET_BIN:-$BIN/examples/robotnet}
    ROUTER=${WEFTD_BIN:-$BIN/weftd}
    if [[ -z "${ROBOTNET_BIN:-}" ]]; then
        log "== building the robotnet example"
        cargo build --release -p weft --example robotnet
    fi
    if ((ROUTED)) && [[ -z "${WEFTD_BIN:-}" ]]; then
        log "== building weftd"
        cargo build --release -p weftd --bin weftd
    fi
else
    COMPARE_TARGET_DIR=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
    ROBOTNET=${ZROBOTNET_BIN:-$COMPARE_TARGET_DIR/release/zrobotnet}
    ROUTER=${ZENOHD:-$COMPARE_TARGET_DIR/zenohd-1.10.2/bin/zenohd}
    if [[ -z "${ZROBOTNET_BIN:-}" ]]; then
        log "== building bench/compare's zrobotnet (Zenoh 1.10.2; release)"
        CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build --release \
            --manifest-path bench/compare/Cargo.toml --no-default-features --features zenoh \
            --bin zrobotnet
    fi
    if ((ROUTED)) && [[ ! -x "$ROUTER" ]]; then
        log "no zenohd at $ROUTER: set ZENOHD, or run bench/compare.sh once (it installs one)"
        exit 1
    fi
fi

# A run's time limit: warm-up (at most 20 s to match), the run, the drain, closing.
LIMIT=$(awk -v s="$RUN_SECONDS" 'BEGIN { printf "%d", s + 60 }')
FAILED=0
RESULTS=$WORK/results.jsonl
: >"$RESULTS"
for topology in "${TOPOLOGIES[@]}"; do
    for run in $(seq "$RUNS"); do
        router=
        if [[ $topology == routed ]]; then
            cat >"$WORK/router.json5" <<CFG
{ mode: "router", listen: { endpoints: ["tcp/127.0.0.1:$PORT"] },
  scouting: { multicast: { enabled: false } } }
CFG
            start router $((LIMIT + 30)) "$ROUTER" -c "$WORK/router.json5"
            router=$STARTED
            wait_listen "$PORT"
            where=(--routed "tcp/127.0.0.1:$PORT")
        else
            where=(--p2p "$PORT" "${STAR[@]}")
        fi
        load=$(cut -d' ' -f1 /proc/loadavg)
        log "== $SYSTEM $topology, run $run of $RUNS (load average $load)"
        start robotnet "$LIMIT" "$ROBOTNET" "${where[@]}" --seconds "$RUN_SECONDS"
        status=0
        wait "$STARTED" || status=$?
        [[ -n $router ]] && stop "$router"
        sed 's/^/    /' "$OUT_DIR/robotnet.out" >&2
        line=$(grep '^{"robotnet"' "$OUT_DIR/robotnet.out" || true)
        if ((status != 0)) || [[ -z $line ]]; then
            log "  $topology run $run failed (status $status)"
            FAILED=1
        fi
        if [[ -n $line ]]; then
            printf '%s\t%s\n' "$load" "$line" >>"$RESULTS"
        fi
        PORT=$((PORT + 1))
    done
done

python3 - "$RESULTS" "$RUN_SECONDS" <<'PY'
import json, sys, statistics
path, seconds = sys.argv[1], sys.argv[2]
runs = {}
for row in open(path):
    load, line = row.rstrip("\n").split("\t", 1)
    r = json.loads(line)
    r["load"] = load
    runs.setdefault(r["robotnet"], []).append(r)

def cell(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.0f}"
    return f"{med:.0f} ({min(values):.0f}-{max(values):.0f})"

for topology, rs in runs.items():
    # weft's program names no system; the others (zrobotnet) do.
    system = f" ({rs[0]['system']})" if "system" in rs[0] else ""
    print(f"robot net{system}, {topology}: {len(rs)} runs of {seconds} s; 1-min load average "
          f"before each run: {', '.join(r['load'] for r in rs)}; links per session: "
          f"{rs[0]['links']}")
    print("| stream | p50 µs | p99 µs | p99.9 µs | max µs | sent | received | lost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("state", "command", "event"):
        k = [r[kind] for r in rs]
        sent = sum(x["sent"] for x in k)
        received = sum(x["received"] for x in k)
        print(f"| {kind} | " + " | ".join(cell([x[f] for x in k]) for f in
              ("p50_us", "p99_us", "p999_us", "max_us"))
              + f" | {sent} | {received} | {sent - received} |")
    late = [r["sent_late"] for r in rs]
    ticks = rs[0]["ticks"]
    print(f"ticks published more than 100 µs late, per run: {cell(late)} of about {ticks} "
          f"(lateness p99 {cell([r['late_p99_us'] for r in rs])} µs, "
          f"max {cell([r['late_max_us'] for r in rs])} µs); medians, (min-max) over the runs")
    print()
PY
exit "$FAILED"
