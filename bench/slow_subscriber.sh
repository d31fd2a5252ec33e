#!/usr/bin/env bash
# A slow subscriber beside a normal one, weftd beside zenohd 1.10.2 in the same run. A
# publisher puts 1 KiB samples at a fixed rate (5,000/s for 10 s, congestion control drop)
# through the router to a normal subscriber and to a slow one: none (the reference), a raw
# session that declares its subscription and never reads its socket again (but keeps its
# session alive), or a weft session whose callback sleeps 1 s per sample. The same clients
# for both routers (weft-testkit's `paced_pubsub`, publisher and normal subscriber, and
# `slow_sub`). Measured: the share of the published samples the normal subscriber received,
# counted once a marker sent after the stream has reached it.
# Prints the table and writes the "Slow subscriber" section of bench/RESULTS.md.
#
# Environment (all optional):
#   ZENOHD            a zenohd 1.10.2 binary (default: the one bench/run.sh installs)
#   BENCH_PORT        first TCP port used on 127.0.0.1 (default 18050)
#   BENCH_RATE        samples published per second (default 5000)
#   BENCH_SECONDS     how long the stream lasts, seconds (default 10)
#   BENCH_NO_WRITE=1  print the table without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

ZENOHD=${ZENOHD:-$ROOT/target/compare/zenohd-1.10.2/bin/zenohd}
PORT=${BENCH_PORT:-18050}
RATE=${BENCH_RATE:-5000}
STREAM_SECONDS=${BENCH_SECONDS:-10}
SIZE=1024
KEY=bench/slow
CASES=(none never-reads sleeps:1000)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-slow.XXXXXX")
OUT_DIR=$WORK

if [[ ! -x "$ZENOHD" ]]; then
    log "no zenohd at $ZENOHD: run bench/run.sh once (it installs one) or set ZENOHD"
    exit 1
fi
log "== building weftd, paced_pubsub and slow_sub"
cargo build --release -p weftd -p weft-testkit --bin weftd --bin paced_pubsub --bin slow_sub
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release

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

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
for slow in "${CASES[@]}"; do
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
        row="$slow	$sys	-"
        line=
        sp=
        rm -f "$WORK/stop" "$OUT_DIR/slow.out"
        ok=yes
        if [[ $slow != none ]]; then
            start slow $((STREAM_SECONDS * 3 + 120)) "$BIN/slow_sub" "$slow" "$PORT" "$KEY/data" \
                $((STREAM_SECONDS * 3 + 90)) "$WORK/stop"
            sp=$STARTED
            wait_line "$OUT_DIR/slow.out" '^declared' "$sp" 30 || ok=no
        fi
        if [[ $ok == yes ]]; then
            start pubsub $((STREAM_SECONDS * 3 + 60)) "$BIN/paced_pubsub" "$PORT" "$KEY" "$SIZE" \
                "$RATE" "$STREAM_SECONDS"
            wait "$STARTED" || true
            line=$(grep '^published=' "$OUT_DIR/pubsub.out" || true)
            slow_line=-
            if [[ -n $sp ]]; then
                touch "$WORK/stop"
                wait_line "$OUT_DIR/slow.out" '^\(pending_bytes\|received\)=' "$sp" 15 || true
                slow_line=$(grep '^\(pending_bytes\|received\)=' "$OUT_DIR/slow.out" || echo -)
            fi
            if [[ -n $line ]]; then
                field() { sed -n "s/.*\b$1=\([0-9.a-z]*\).*/\1/p" <<<"$line"; }
                row="$slow	$sys	$(field published)	$(field received)	$(field share)	$(field publisher_drops)	$(field marker)	$slow_line"
                log "  $sys, slow subscriber $slow: $line; slow one: $slow_line"
            fi
        fi
        if [[ -z ${line:-} ]]; then
            log "  $sys, slow subscriber $slow: no result"
            sed 's/^/    pubsub: /' "$OUT_DIR/pubsub.out" 2>/dev/null | tail -3 >&2 || true
            sed 's/^/    slow: /' "$OUT_DIR/slow.out" 2>/dev/null | tail -3 >&2 || true
        fi
        ROWS+=("$row")
        [[ -n $sp ]] && stop "$sp"
        stop "$rp"
        rm -f "$OUT_DIR/pubsub.out"
        PORT=$((PORT + 1))
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# thousands N: N with thousands separators.
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

table() {
    echo "| slow subscriber | router | published | normal subscriber received | share | marker received | the slow one at the end |"
    echo "|---|---|---:|---:|---:|---|---|"
    local r slow sys published received share drops marker slow_line name what end
    for r in "${ROWS[@]}"; do
        IFS=$'\t' read -r slow sys published received share drops marker slow_line <<<"$r"
        name=weftd; [[ $sys == zenoh ]] && name="zenohd 1.10.2"
        case $slow in
            none) what="none" ;;
            never-reads) what="never reads its socket" ;;
            sleeps:*) what="sleeps $((${slow#sleeps:} / 1000)) s per sample in its callback" ;;
        esac
        if [[ $published == - ]]; then
            echo "| $what | $name | - | - | - | - | - |"
            continue
        fi
        case $slow_line in
            pending_bytes=*)
                end="still connected; $(thousands "$(sed -n 's/pending_bytes=\([0-9]*\).*/\1/p' <<<"$slow_line")") bytes waiting"
                if [[ $slow_line == *closed_by_router=yes* ]]; then
                    end="closed by the router (seen $(sed -n 's/.*closed_after_s=\([0-9.]*\).*/\1/p' <<<"$slow_line") s after it declared)"
                fi
                ;;
            received=*) end="$(thousands "${slow_line#received=}") samples handled" ;;
            *) end="-" ;;
        esac
        [[ $drops != 0 ]] && published="$published ($drops dropped by the publisher's session)"
        echo "| $what | $name | $(thousands "$published") | $(thousands "$received") | $share % | $marker | $end |"
    done
}
TABLE=$(table)
echo "$TABLE"
[[ -n "${BENCH_NO_WRITE:-}" ]] && exit 0

COMMIT=$(git rev-parse --short HEAD)
# Changes to the crates' sources (not to their tests) make the figures those of another code.
[[ -n "$(git status --porcelain --untracked-files=no -- crates ':(exclude)crates/*/tests/*')" ]] &&
    COMMIT="$COMMIT, with uncommitted changes"
SECTION=$WORK/section.md
{
    echo "## Slow subscriber"
    echo
    fmt -w 92 <<TEXT
\`bench/slow_subscriber.sh\` ($(date -u +%F), $(nproc) cores, weft at commit \`$COMMIT\`;
load average before $LOAD_BEFORE, after $LOAD_AFTER): a publisher puts $SIZE-byte samples,
$RATE per second for $STREAM_SECONDS s (congestion control drop), through the router to a
normal subscriber and a slow one, all clients of the router on TCP loopback, the same clients
for both routers: weft-testkit's \`paced_pubsub\` (the publisher and the normal subscriber,
two weft client sessions) and \`slow_sub\`. The slow subscriber is either a raw Zenoh session
that declares its subscription and never reads its socket again (it writes a KeepAlive each
second, so its session stays alive unless the router closes it), or a weft session whose
callback sleeps 1 s per sample. Share is what the normal subscriber received of what was
published, counted once a marker put after the stream (congestion control block, on a key
only the normal subscriber has) has reached it. The last column is the slow subscriber's
state once the stream is over: for the one that never reads, whether the router closed its
session (and when the subscriber saw it, from its declaration: a KeepAlive it writes fails)
or the bytes it could still read (5 s at most); for the sleeping one, the samples its
callback had handled.
TEXT
    echo
    echo "$TABLE"
    echo
}>"$SECTION"
write_section "Slow subscriber" "$SECTION"
