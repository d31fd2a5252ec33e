#!/usr/bin/env bash
# The Python binding beside zenoh-python 1.10.2 in the same run, on TCP loopback, with
# weft's Rust tools as the reference for what the binding costs:
#   throughput: a Python publisher loop (one process, congestion control block) to a Python
#   subscriber callback that counts (another process), 8 B, 1 KiB and 64 KiB; peer to peer
#   (the subscriber's peer session listens, the publisher's connects) and routed (two
#   client sessions of a router: weftd for weft, zenohd 1.10.2 for zenoh-python);
#   latency: 64 B ping-pong, peer to peer, one way = half the round trip, p50 and p99.
# The same points with `weft pub-thr`/`sub-thr` and `weft ping`/`pong` (through weftd
# when routed) give the Rust column. Each point runs BENCH_RUNS times, fresh processes
# each, the three implementations in turn (the order changing from run to run); the
# tables give the medians. Prints the tables and writes the "Python binding" section of
# bench/RESULTS.md. Every process is bounded in time and ended on exit.
#
# Environment (all optional):
#   ZENOHD             a zenohd 1.10.2 binary (default: the one bench/run.sh installs)
#   BENCH_PYTHON       a Python with eclipse-zenoh 1.10.2 and this weft binding installed
#                      (default target/venv-py, made and filled when missing)
#   BENCH_NO_INSTALL=1 use BENCH_PYTHON's weft as it is (default: reinstall from ./python)
#   BENCH_PORT         first TCP port used on 127.0.0.1 (default 18400)
#   BENCH_RUNS         runs per point (default 3)
#   BENCH_WINDOWS      one-second throughput windows per run, median kept (default 5)
#   BENCH_PINGS        measured round trips per latency run (default 10000)
#   BENCH_NOTE         a sentence added to the section's text (how busy the machine was)
#   BENCH_NO_WRITE=1   print the tables without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

ZENOHD_GIVEN=${ZENOHD:+1}
ZENOHD=${ZENOHD:-$ROOT/target/compare/zenohd-1.10.2/bin/zenohd}
VENV=$ROOT/target/venv-py
PY=${BENCH_PYTHON:-$VENV/bin/python}
PORT=${BENCH_PORT:-18400}
RUNS=${BENCH_RUNS:-3}
WINDOWS=${BENCH_WINDOWS:-5}
PINGS=${BENCH_PINGS:-10000}
SIZES=(8 1024 65536)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-python.XXXXXX")
OUT_DIR=$WORK
RESULTS=$WORK/results.tsv
: >"$RESULTS"

COMMAND="bench/python.sh"
for v in BENCH_NO_INSTALL BENCH_PORT BENCH_RUNS BENCH_WINDOWS BENCH_PINGS; do
    [[ -n "${!v:-}" ]] && COMMAND="$v=${!v} $COMMAND"
done
# Paths of this machine are not written out, only that they were given.
[[ -n "${BENCH_PYTHON:-}" ]] && COMMAND="BENCH_PYTHON=<a Python> $COMMAND"
[[ -n "$ZENOHD_GIVEN" ]] && COMMAND="ZENOHD=<zenohd 1.10.2> $COMMAND"

if [[ ! -x "$ZENOHD" ]]; then
    log "no zenohd at $ZENOHD: run bench/run.sh once (it installs one) or set ZENOHD"
    exit 1
fi
log "== building weftd and weft"
cargo build --release -p weftd -p weft-cli --bin weftd --bin weft
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
if [[ -z "${BENCH_PYTHON:-}" && ! -x "$PY" ]]; then
    log "== making $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check maturin==1.9.4 eclipse-zenoh==1.10.2
fi
if [[ -z "${BENCH_NO_INSTALL:-}" ]]; then
    log "== installing the binding (release build) into $PY's environment"
    PATH="$(dirname "$PY"):$PATH" "$PY" -m pip install --quiet --disable-pip-version-check \
        --no-build-isolation --force-reinstall --no-deps ./python
fi
"$PY" -c 'import weft, zenoh' || { log "$PY lacks weft or zenoh"; exit 1; }

record() { printf '%s\n' "$(IFS=$'\t'; echo "$*")" >>"$RESULTS"; }

# router IMPL: starts the router IMPL uses (weftd, or zenohd for zenoh-python) on a fresh
# port; sets ROUTER_PID and ROUTER_END.
router() {
    PORT=$((PORT + 1))
    if [[ $1 == zenoh* ]]; then
        start router 300 "$ZENOHD" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    else
        start router 300 "$BIN/weftd" -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting
    fi
    ROUTER_PID=$STARTED
    ROUTER_END=tcp/127.0.0.1:$PORT
    wait_listen "$PORT"
}

# thr IMPL TOPOLOGY SIZE: one throughput run; records "thr TOPOLOGY IMPL SIZE MSGS_PER_S".
thr() {
    local impl=$1 topo=$2 size=$3 rp= sub pub secs=$((WINDOWS + 40)) n
    local sub_end pub_end py_sub py_pub
    if [[ $topo == peer ]]; then
        PORT=$((PORT + 1))
        sub_end=(-l "tcp/127.0.0.1:$PORT")
        pub_end=(-e "tcp/127.0.0.1:$PORT")
        py_sub=(--listen "tcp/127.0.0.1:$PORT")
        py_pub=(--connect "tcp/127.0.0.1:$PORT")
    else
        router "$impl"
        rp=$ROUTER_PID
        sub_end=(-m client -e "$ROUTER_END")
        pub_end=(-m client -e "$ROUTER_END")
        py_sub=(--client --connect "$ROUTER_END")
        py_pub=(--client --connect "$ROUTER_END")
    fi
    if [[ $impl == rust ]]; then
        # Rounds of about a fifth of a second or more, as many as the Python windows.
        case $size in 8 | 1024) n=200000 ;; *) n=10000 ;; esac
        sub=("$BIN/weft" sub-thr "${sub_end[@]}" --no-multicast-scouting -n "$n" -s "$WINDOWS"
            --max-seconds $((WINDOWS + 30)))
        pub=("$BIN/weft" pub-thr "$size" "${pub_end[@]}" --no-multicast-scouting --duration "$secs")
    else
        local flags=()
        [[ $impl == zenoh ]] && flags=(--zenoh)
        [[ $impl == zenoh-noshm ]] && flags=(--zenoh --no-shm)
        sub=("$PY" python/bench/thr.py sub --size "$size" "${flags[@]}" "${py_sub[@]}"
            --windows "$WINDOWS")
        pub=("$PY" python/bench/thr.py pub --size "$size" "${flags[@]}" "${py_pub[@]}"
            --seconds "$secs")
    fi
    rm -f "$OUT_DIR/sub.out" "$OUT_DIR/pub.out"
    start sub $((WINDOWS + 45)) "${sub[@]}"
    local sp=$STARTED
    if [[ $topo == peer ]]; then wait_listen "$PORT" || true; else sleep 0.5; fi
    start pub $((secs + 5)) "${pub[@]}"
    thr_collect "$sp" "$STARTED" "$topo $impl $size B"
    [[ -n $rp ]] && stop "$rp"
    log "  $topo thr $impl $size B: $THR_RATE msg/s"
    record thr "$topo" "$impl" "$size" "$THR_RATE"
}

# lat IMPL: one peer-to-peer ping-pong run, 64 B; records "lat peer IMPL 64 P50 P99".
lat() {
    local impl=$1 pong ping
    PORT=$((PORT + 1))
    if [[ $impl == rust ]]; then
        pong=("$BIN/weft" pong -l "tcp/127.0.0.1:$PORT" --no-multicast-scouting)
        ping=("$BIN/weft" ping 64 -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting \
            --samples "$PINGS" -w 1)
    else
        local flags=()
        [[ $impl == zenoh ]] && flags=(--zenoh)
        pong=("$PY" python/bench/ping.py pong "${flags[@]}" --listen "tcp/127.0.0.1:$PORT" \
            --seconds 120)
        ping=("$PY" python/bench/ping.py ping "${flags[@]}" --connect "tcp/127.0.0.1:$PORT" \
            --size 64 --count "$PINGS")
    fi
    rm -f "$OUT_DIR/ping.out" "$OUT_DIR/pong.out"
    start pong 130 "${pong[@]}"
    local pp=$STARTED
    wait_listen "$PORT" || true
    start ping 90 "${ping[@]}"
    wait "$STARTED" 2>/dev/null || true
    stop "$STARTED"
    stop "$pp"
    local p50 p99
    p50=$(sed -n 's/^p50_us=\([0-9.]*\) .*/\1/p' "$OUT_DIR/ping.out" | tail -1)
    p99=$(sed -n 's/.* p99_us=\([0-9.]*\).*/\1/p' "$OUT_DIR/ping.out" | tail -1)
    if [[ -z $p50 || -z $p99 ]]; then
        log "  lat $impl: no result"
        sed 's/^/    ping: /' "$OUT_DIR/ping.out" | tail -5 >&2
        sed 's/^/    pong: /' "$OUT_DIR/pong.out" | tail -5 >&2
        p50=- p99=-
    fi
    log "  peer lat $impl 64 B: p50 $p50 us, p99 $p99 us"
    record lat peer "$impl" 64 "$p50" "$p99"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "== measuring ($RUNS runs per point; load average $LOAD_BEFORE)"
for run in $(seq "$RUNS"); do
    # The order of the three changes from run to run.
    case $((run % 3)) in
        1) order=(weft zenoh rust) ;;
        2) order=(zenoh rust weft) ;;
        0) order=(rust weft zenoh) ;;
    esac
    log "== run $run of $RUNS (${order[*]})"
    for topo in peer routed; do
        for size in "${SIZES[@]}"; do
            for impl in "${order[@]}"; do thr "$impl" "$topo" "$size"; done
            # zenoh-python moves large values through shared memory: the same without.
            if ((size == 65536)); then thr zenoh-noshm "$topo" "$size"; fi
        done
    done
    for impl in "${order[@]}"; do lat "$impl"; done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# The tables: medians over the runs, ratios of the medians.
TABLES=$(python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
def med(kind, topo, impl, size, col=4):
    v = [float(r[col]) for r in rows
         if r[:4] == [kind, topo, impl, str(size)] and r[col] != "-"]
    return statistics.median(v) if v else None
def num(v): return "-" if v is None else f"{v:,.0f}"
def us(v): return "-" if v is None else f"{v:.1f} µs"
def ratio(a, b): return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}×"
def runs(kind, topo, impl, size):
    return len([r for r in rows if r[:4] == [kind, topo, impl, str(size)] and r[4] != "-"])
print("| Topology | Payload | weft-python msg/s | zenoh-python 1.10.2 msg/s | weft / zenoh | weft Rust msg/s | weft-python / Rust |")
print("|---|---|---:|---:|---:|---:|---:|")
for topo in ("peer", "routed"):
    for size in (8, 1024, 65536):
        w, z, r = (med("thr", topo, i, size) for i in ("weft", "zenoh", "rust"))
        name = "peer to peer" if topo == "peer" else "routed"
        payload = {8: "8 B", 1024: "1 KiB", 65536: "64 KiB"}[size]
        print(f"| {name} | {payload} | {num(w)} | {num(z)} | {ratio(w, z)} | {num(r)} | {ratio(w, r)} |")
        if size == 65536:
            n = med("thr", topo, "zenoh-noshm", size)
            print(f"| {name} | 64 KiB, zenoh-python's shared memory off | {num(w)} | {num(n)} | {ratio(w, n)} | | |")
print()
print("| 64 B, peer to peer, one way | weft-python | zenoh-python 1.10.2 | weft / zenoh | weft Rust | weft-python / Rust |")
print("|---|---:|---:|---:|---:|---:|")
for label, col in (("p50", 4), ("p99", 5)):
    w, z, r = (med("lat", "peer", i, 64, col) for i in ("weft", "zenoh", "rust"))
    print(f"| {label} | {us(w)} | {us(z)} | {ratio(w, z)} | {us(r)} | {ratio(w, r)} |")
PY
)
echo "$TABLES"
[[ -n "${BENCH_NO_WRITE:-}" ]] && exit 0

COMMIT=$(git rev-parse --short HEAD)
[[ -n "$(git status --porcelain --untracked-files=no -- crates python/src)" ]] &&
    COMMIT="$COMMIT, with uncommitted changes"
SECTION=$WORK/section.md
{
    echo "## Python binding"
    echo
    fmt -w 92 <<TEXT
\`$COMMAND\` ($(date -u +%F), $(nproc) cores, weft at commit
\`$COMMIT\`, $("$PY" --version); load average before $LOAD_BEFORE, after $LOAD_AFTER):
weft's binding (\`import weft as zenoh\`) beside zenoh-python 1.10.2, the same programs
(python/bench/thr.py and ping.py, \`--zenoh\` for zenoh-python), and weft's Rust tools
(\`weft pub-thr\`/\`sub-thr\`, \`weft ping\`/\`pong\`) for the cost of the binding.
Throughput: a publisher loop in one process (congestion control block) to a subscriber
callback that counts in another, the median of $WINDOWS one-second windows; peer to peer
(the subscriber's peer session listens on 127.0.0.1, the publisher's connects, multicast
scouting off) and routed (two client sessions: weft's through weftd, zenoh-python's
through zenohd 1.10.2, the Rust tools' through weftd). zenoh-python moves large values
between two processes of one host through shared memory by default; the 64 KiB rows
marked so give zenoh-python with it off (\`--no-shm\`), bytes over TCP as weft sends
them. Latency: 64 B ping-pong between two peer sessions (publishers express, the ping
reading a channel subscriber, the pong answering from its callback), $PINGS round trips,
one way = half the round trip. Each figure is the median of $RUNS runs with fresh
processes, the implementations in turn in the same run; the ratios are those of the
medians. Publisher, subscriber (and router) share the $(nproc) cores. ${BENCH_NOTE:-}
The binding's reader of a queue (a callback's thread, \`recv()\`) looks for the next item
for up to 100 µs, yielding its core, before it sleeps, when items have been coming that
close together, as \`weft ping\`'s channel does (\`weft::FifoReceiver\`).
TEXT
    echo
    echo "$TABLES"
    echo
} >"$SECTION"
write_section "Python binding" "$SECTION"
