#!/usr/bin/env bash
# Fan-out, weftd beside zenohd 1.10.2 in the same run: one publisher, N subscribers (100),
# all clients of the router, 8 B and 1 KiB payloads. The same clients for both routers:
# `weft pub-thr` publishes on test/thr as fast as the router takes it (congestion control
# block); weft-testkit's `fanout_subs` holds the N subscribers, N weft client sessions in one
# process, each counting what it receives.
# Measured: samples delivered per second in total and per subscriber (mean, slowest,
# fastest) over a window of BENCH_SECONDS, after every subscriber has received a sample and
# one more second; the router's CPU time over that window, per sample delivered.
# Prints the table and writes the "Fan-out" section of bench/RESULTS.md.
#
# Environment (all optional):
#   ZENOHD             a zenohd 1.10.2 binary (default: the one bench/run.sh installs)
#   BENCH_PORT         first TCP port used on 127.0.0.1 (default 18000)
#   BENCH_SUBSCRIBERS  the number of subscribers (default 100)
#   BENCH_SECONDS      the measured window, seconds (default 10)
#   BENCH_NO_WRITE=1   print the table without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

ZENOHD=${ZENOHD:-$ROOT/target/compare/zenohd-1.10.2/bin/zenohd}
PORT=${BENCH_PORT:-18000}
SUBS=${BENCH_SUBSCRIBERS:-100}
SECONDS_MEASURED=${BENCH_SECONDS:-10}
SIZES=(8 1024)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-fanout.XXXXXX")
OUT_DIR=$WORK

if [[ ! -x "$ZENOHD" ]]; then
    log "no zenohd at $ZENOHD: run bench/run.sh once (it installs one) or set ZENOHD"
    exit 1
fi
log "== building weftd, weft and fanout_subs"
cargo build --release -p weftd -p weft-cli -p weft-testkit --bin weftd --bin weft --bin fanout_subs
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
TICK=$(getconf CLK_TCK)

# cpu_ticks PID: the user and system time of process PID, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# wait_line FILE PATTERN PID SECONDS: until FILE has a line matching PATTERN; fails when
# PID ends first or SECONDS pass.
wait_line() {
    local i
    for i in $(seq $(($4 * 50))); do
        grep -q "$2" "$1" && return 0
        kill -0 "$3" 2>/dev/null || { grep -q "$2" "$1" && return 0; return 1; }
        sleep 0.02
    done
    return 1
}

# thousands N: N with thousands separators.
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
for size in "${SIZES[@]}"; do
    for sys in weft zenoh; do
        cat >"$WORK/router.json5" <<CFG
{ mode: "router", listen: { endpoints: ["tcp/127.0.0.1:$PORT"] },
  scouting: { multicast: { enabled: false } } }
CFG
        if [[ $sys == weft ]]; then
            start "router-$sys" 600 "$BIN/weftd" -c "$WORK/router.json5"
        else
            start "router-$sys" 600 "$ZENOHD" -c "$WORK/router.json5"
        fi
        rp=$STARTED
        wait_listen "$PORT"
        router=$(pgrep -P "$rp" | head -1)
        start subs 300 "$BIN/fanout_subs" "$PORT" "$SUBS" test/thr "$SECONDS_MEASURED"
        sp=$STARTED
        subs=$(pgrep -P "$sp" | head -1)
        pp=
        row="$size	$sys	-"
        if wait_line "$OUT_DIR/subs.out" '^ready' "$sp" 120; then
            start pub $((SECONDS_MEASURED + 120)) "$BIN/weft" pub-thr "$size" -m client \
                -e "tcp/127.0.0.1:$PORT" --no-multicast-scouting --duration $((SECONDS_MEASURED + 90))
            pp=$STARTED
            if wait_line "$OUT_DIR/subs.out" '^measuring' "$sp" 90; then
                pub=$(pgrep -P "$pp" | head -1)
                c0=$(cpu_ticks "$router"); s0=$(cpu_ticks "$subs"); p0=$(cpu_ticks "$pub")
                t0=$(date +%s.%N)
                if wait_line "$OUT_DIR/subs.out" '^subscribers=' "$sp" $((SECONDS_MEASURED + 30)); then
                    c1=$(cpu_ticks "$router"); s1=$(cpu_ticks "$subs"); p1=$(cpu_ticks "$pub")
                    t1=$(date +%s.%N)
                    line=$(grep '^subscribers=' "$OUT_DIR/subs.out")
                    field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
                    delivered=$(field delivered)
                    # cores TICKS: CPU time over the window's wall time.
                    cores() { awk -v c="$1" -v t="$TICK" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", c / t / (b - a) }'; }
                    cores=$(cores $((c1 - c0)))
                    clients="$(cores $((p1 - p0))) + $(cores $((s1 - s0)))"
                    ns=$(awk -v c=$((c1 - c0)) -v t="$TICK" -v n="$delivered" \
                        'BEGIN { printf "%.0f", (n > 0) ? (c / t * 1e9 / n) : 0 }')
                    row="$size	$sys	$(field rate)	$(field per_subscriber_mean)	$(field per_subscriber_min)	$(field per_subscriber_max)	$cores	$ns	$clients"
                    log "  $sys, $size B: $line; router $cores cores, $ns ns CPU per delivered sample; publisher + subscribers $clients cores"
                fi
            fi
        fi
        if [[ $row == *"	-" ]]; then
            log "  $sys, $size B: no result"
            sed 's/^/    subs: /' "$OUT_DIR/subs.out" | tail -3 >&2
            [[ -f "$OUT_DIR/pub.out" ]] && sed 's/^/    pub: /' "$OUT_DIR/pub.out" | tail -3 >&2
        fi
        ROWS+=("$row")
        [[ -n $pp ]] && stop "$pp"
        # The subscribers end once nothing arrives any more.
        wait_line "$OUT_DIR/subs.out" '^all=' "$sp" 30 || true
        stop "$sp"
        stop "$rp"
        rm -f "$OUT_DIR/pub.out"
        PORT=$((PORT + 1))
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

table() {
    echo "| Payload | router | delivered, total msg/s | per subscriber msg/s: mean (slowest, fastest) | router CPU, cores | router CPU per delivered sample | publisher + subscribers CPU, cores |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    local r size sys rate mean min max cores ns clients name payload
    for r in "${ROWS[@]}"; do
        IFS=$'\t' read -r size sys rate mean min max cores ns clients <<<"$r"
        name=weftd; [[ $sys == zenoh ]] && name="zenohd 1.10.2"
        payload="$size B"; [[ $size == 1024 ]] && payload="1 KiB"
        if [[ $rate == - ]]; then
            echo "| $payload | $name | - | - | - | - | - |"
        else
            echo "| $payload | $name | $(thousands "$rate") | $(thousands "$mean") ($(thousands "$min"), $(thousands "$max")) | $cores | $ns ns | $clients |"
        fi
    done
}

ratios() {
    local size w z r s sys rate rest payload
    for size in "${SIZES[@]}"; do
        w=-; z=-
        for r in "${ROWS[@]}"; do
            IFS=$'\t' read -r s sys rate rest <<<"$r"
            [[ $s == "$size" ]] || continue
            if [[ $sys == weft ]]; then w=$rate; else z=$rate; fi
        done
        payload="$size B"; [[ $size == 1024 ]] && payload="1 KiB"
        if [[ $w != - && $z != - ]]; then
            awk -v p="$payload" -v w="$w" -v z="$z" 'BEGIN { printf "%s: %.2f×\n", p, w / z }'
        else
            echo "$payload: -"
        fi
    done | paste -sd ';' | sed 's/;/; /g'
}
TABLE=$(table)
RATIOS=$(ratios)
echo "$TABLE"
echo "weftd / zenohd, delivered: $RATIOS"
[[ -n "${BENCH_NO_WRITE:-}" ]] && exit 0

COMMIT=$(git rev-parse --short HEAD)
# Changes to the crates' sources (not to their tests) make the figures those of another code.
[[ -n "$(git status --porcelain --untracked-files=no -- crates ':(exclude)crates/*/tests/*')" ]] &&
    COMMIT="$COMMIT, with uncommitted changes"
SECTION=$WORK/section.md
{
    echo "## Fan-out"
    echo
    fmt -w 92 <<TEXT
\`bench/fanout.sh\` ($(date -u +%F), $(nproc) cores, weft at commit \`$COMMIT\`; load average
before $LOAD_BEFORE, after $LOAD_AFTER): one publisher and $SUBS subscribers, all clients of
the router on TCP loopback, the same clients for both routers: \`weft pub-thr\` publishes on
\`test/thr\` as fast as the router takes it (congestion control block); weft-testkit's
\`fanout_subs\` holds the $SUBS subscribers, $SUBS weft client sessions in one process, each
counting what it receives. Delivered is the sum over the subscribers, per second, over a
window of $SECONDS_MEASURED s that starts one second after every subscriber has received a
sample. Router CPU is its user and system time over the window, in cores (CPU time over wall
time) and per sample delivered; the clients' CPU is over the same window, the publisher's
process + the subscribers' process, in cores. Router, publisher and subscribers share the
$(nproc) cores, so the delivered rate is that of the whole path; the router's CPU per sample
is its own cost.
TEXT
    echo
    echo "$TABLE"
    echo
    echo "weftd / zenohd, delivered: $RATIOS."
    echo
}>"$SECTION"
write_section "Fan-out" "$SECTION"
