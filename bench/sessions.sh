#!/usr/bin/env bash
# Sessions at scale, weftd beside zenohd 1.10.2 in the same run: N client sessions (1,000
# and 10,000), each declaring one subscription, opened one after the other from one process
# (weft-testkit's `open_sessions`, raw Zenoh client sessions: the same load for both).
# Measured: the time to open them all, the router's resident memory per session (VmRSS with
# them minus at rest, divided by N), its threads and its descriptors.
# Prints the table and writes the "Sessions" section of bench/RESULTS.md.
#
# Environment (all optional):
#   ZENOHD            a zenohd 1.10.2 binary (default: the one bench/run.sh installs)
#   BENCH_PORT        first TCP port used on 127.0.0.1 (default 17900)
#   BENCH_SESSIONS    the session counts (default "1000 10000")
#   BENCH_NO_WRITE=1  print the table without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

ZENOHD=${ZENOHD:-$ROOT/target/compare/zenohd-1.10.2/bin/zenohd}
PORT=${BENCH_PORT:-17900}
read -r -a COUNTS <<<"${BENCH_SESSIONS:-1000 10000}"
MOST=0
for n in "${COUNTS[@]}"; do ((n > MOST)) && MOST=$n; done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-sessions.XXXXXX")
OUT_DIR=$WORK

if [[ ! -x "$ZENOHD" ]]; then
    log "no zenohd at $ZENOHD: run bench/run.sh once (it installs one) or set ZENOHD"
    exit 1
fi
# A descriptor per session in each process (the router, the clients), and some room.
need=$((MOST + 1000))
if (($(ulimit -Sn) < need)); then
    ulimit -Sn "$need" 2>/dev/null || { log "ulimit -Sn $need refused: fewer sessions, or raise the hard limit"; exit 1; }
fi
log "== building weftd and open_sessions"
cargo build --release -p weftd -p weft-testkit --bin weftd --bin open_sessions
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release

status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

ROWS=()
for n in "${COUNTS[@]}"; do
    for sys in weft zenoh; do
        cat >"$WORK/router.json5" <<CFG
{ mode: "router", listen: { endpoints: ["tcp/127.0.0.1:$PORT"] },
  scouting: { multicast: { enabled: false } },
  transport: { unicast: { max_sessions: $((n + 100)), accept_pending: 1000 } } }
CFG
        if [[ $sys == weft ]]; then
            # No REST: the configuration has no `plugins.rest`.
            start "router-$sys" 600 "$BIN/weftd" -c "$WORK/router.json5"
        else
            start "router-$sys" 600 "$ZENOHD" -c "$WORK/router.json5"
        fi
        rp=$STARTED
        wait_listen "$PORT"
        sleep 1
        router=$(pgrep -P "$rp" | head -1)
        rest_kib=$(status_of "$router" VmRSS)
        start clients 600 "$BIN/open_sessions" "$PORT" "$n" 1 8
        cp=$STARTED
        for _ in $(seq 1200); do
            grep -q '^opened=' "$OUT_DIR/clients.out" && break
            kill -0 "$cp" 2>/dev/null || break
            sleep 0.1
        done
        # Until the router holds every session's socket (10 s at most).
        for _ in $(seq 100); do
            (($(find "/proc/$router/fd" -mindepth 1 -maxdepth 1 | wc -l) >= n)) && break
            sleep 0.1
        done
        open_s=$(sed -n 's/^opened=[0-9]* seconds=\([0-9.]*\)/\1/p' "$OUT_DIR/clients.out")
        if [[ -z "$open_s" ]]; then
            log "  $sys, $n sessions: no result"; sed 's/^/    /' "$OUT_DIR/clients.out" | tail -3 >&2
            ROWS+=("$n	$sys	-	-	-	-")
        else
            kib=$(status_of "$router" VmRSS)
            threads=$(status_of "$router" Threads)
            fds=$(find "/proc/$router/fd" -mindepth 1 -maxdepth 1 | wc -l)
            per=$(((kib - rest_kib) * 1024 / n))
            log "  $sys, $n sessions: opened in $open_s s; VmRSS $rest_kib -> $kib KiB ($per B/session); $threads threads; $fds descriptors"
            ROWS+=("$n	$sys	$open_s	$per	$threads	$fds")
        fi
        stop "$cp"
        stop "$rp"
        PORT=$((PORT + 1))
    done
done

table() {
    echo "| Sessions | router | open time (s) | RSS per session | threads | descriptors |"
    echo "|---|---|---|---|---|---|"
    for r in "${ROWS[@]}"; do
        IFS=$'\t' read -r n sys open per threads fds <<<"$r"
        name=weftd; [[ $sys == zenoh ]] && name="zenohd 1.10.2"
        if [[ $per == - ]]; then
            echo "| $n | $name | - | - | - | - |"
        else
            echo "| $n | $name | $open | $((per / 1024)).$(((per % 1024) * 10 / 1024)) KiB | $threads | $fds |"
        fi
    done
}
TABLE=$(table)
echo "$TABLE"
[[ -n "${BENCH_NO_WRITE:-}" ]] && exit 0

SECTION=$WORK/section.md
{
    echo "## Sessions"
    echo
    echo "\`bench/sessions.sh\` ($(date -u +%F), $(nproc) cores): client sessions opened one after the"
    echo "other from one process (weft-testkit's \`open_sessions\`: raw Zenoh client sessions, each"
    echo "declaring one subscription, the same load for both routers), then held open. RSS per session"
    echo "is the router's VmRSS with the sessions minus at rest, over their number; threads and"
    echo "descriptors are the router's own, with the sessions open."
    echo
    echo "$TABLE"
    echo
}>"$SECTION"
write_section "Sessions" "$SECTION"
