#!/usr/bin/env bash
# Route lookups at scale, weftd beside zenohd 1.10.2 in the same run: 1,000 client sessions
# hold S subscriptions each (S = 10 and 100: 10,000 and 100,000 in all, `bench/0`...,
# weft-testkit's `open_sessions`: the same load for both routers); once the router has
# handled every declaration (each session's liveliness get on a key nothing matches is
# answered), a publisher (`weft pub-thr --keys`) cycles over 10,000 distinct keys
# (`bench/0` to `bench/9999`, each matching one session's subscription); a subscriber on
# `bench/**` measures the routed msg/s (`weft sub-thr`, median of its rounds).
# A last row per router: the same publisher and subscriber without the sessions.
# Prints the table and writes the "Route lookups" section of bench/RESULTS.md.
#
# Environment (all optional):
#   ZENOHD            a zenohd 1.10.2 binary (default: the one bench/run.sh installs)
#   BENCH_PORT        first TCP port used on 127.0.0.1 (default 17950)
#   BENCH_SESSIONS    sessions holding the subscriptions (default 1000)
#   BENCH_SUBS        subscriptions per session, the loaded rows (default "10 100")
#   BENCH_KEYS        distinct keys published on (default 10000)
#   BENCH_NO_WRITE=1  print the table without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

ZENOHD=${ZENOHD:-$ROOT/target/compare/zenohd-1.10.2/bin/zenohd}
PORT=${BENCH_PORT:-17950}
SESSIONS=${BENCH_SESSIONS:-1000}
read -r -a SUBS_LIST <<<"${BENCH_SUBS:-10 100}"
KEYS=${BENCH_KEYS:-10000}
SIZE=8
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-routes.XXXXXX")
OUT_DIR=$WORK

if [[ ! -x "$ZENOHD" ]]; then
    log "no zenohd at $ZENOHD: run bench/run.sh once (it installs one) or set ZENOHD"
    exit 1
fi
need=$((SESSIONS + 1000))
if (($(ulimit -Sn) < need)); then
    ulimit -Sn "$need" 2>/dev/null || { log "ulimit -Sn $need refused"; exit 1; }
fi
log "== building weftd, weft and open_sessions"
cargo build --release -p weftd -p weft-cli -p weft-testkit --bin weftd --bin weft --bin open_sessions
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release

ROWS=()
# measure SYS SUBS: one row; SUBS subscriptions per session (0: no sessions at all).
measure() {
    local sys=$1 subs=$2 rp cp="" sp pp
    cat >"$WORK/router.json5" <<CFG
{ mode: "router", listen: { endpoints: ["tcp/127.0.0.1:$PORT"] },
  scouting: { multicast: { enabled: false } },
  transport: { unicast: { max_sessions: $((SESSIONS + 100)), accept_pending: 1000 } } }
CFG
    if [[ $sys == weft ]]; then
        start "router-$sys" 900 "$BIN/weftd" -c "$WORK/router.json5"
    else
        start "router-$sys" 900 "$ZENOHD" -c "$WORK/router.json5"
    fi
    rp=$STARTED
    wait_listen "$PORT"
    local declared=$((SESSIONS * subs)) open_s=-
    if ((subs > 0)); then
        start clients 900 "$BIN/open_sessions" "$PORT" "$SESSIONS" "$subs" 600
        cp=$STARTED
        for _ in $(seq 6000); do
            grep -q '^declared=' "$OUT_DIR/clients.out" && break
            kill -0 "$cp" 2>/dev/null || break
            sleep 0.1
        done
        open_s=$(sed -n 's/^declared=[0-9]* seconds=\([0-9.]*\)/\1/p' "$OUT_DIR/clients.out")
        if [[ -z "$open_s" ]]; then
            local why
            why=$(grep -m1 '^open_sessions:' "$OUT_DIR/clients.out" || echo "no answer in 600 s")
            log "  $sys, $declared subscriptions: not all declared ($why)"
            ROWS+=("$sys	$declared	-	- (${why#open_sessions: })")
            stop "$cp"; stop "$rp"; PORT=$((PORT + 1)); return
        fi
    fi
    local endpoint=tcp/127.0.0.1:$PORT
    start sub 300 "$BIN/weft" sub-thr -m client -e "$endpoint" -k 'bench/**' \
        --samples 200000 --rounds 5 --max-seconds 120
    sp=$STARTED
    sleep 1
    start pub 300 "$BIN/weft" pub-thr "$SIZE" -m client -e "$endpoint" -k bench \
        --keys "$KEYS" --duration 125
    pp=$STARTED
    thr_collect "$sp" "$pp" "$sys"
    log "  $sys, $declared subscriptions (declared in $open_s s): $THR_RATE msg/s"
    ROWS+=("$sys	$declared	$THR_RATE	$open_s")
    [[ -n "$cp" ]] && stop "$cp"
    stop "$rp"
    PORT=$((PORT + 1))
}

for subs in "${SUBS_LIST[@]}" 0; do
    for sys in weft zenoh; do
        measure "$sys" "$subs"
    done
done

# field SYS DECLARED N: field N (3: msg/s, 4: seconds to declare) of that row.
field() {
    local r
    for r in "${ROWS[@]}"; do
        IFS=$'\t' read -r -a f <<<"$r"
        if [[ ${f[0]} == "$1" && ${f[1]} == "$2" ]]; then echo "${f[$(($3 - 1))]}"; return; fi
    done
}

table() {
    echo "| Subscriptions held | weftd: declared in (s) | zenohd: declared in (s) | weftd msg/s | zenohd 1.10.2 msg/s | ratio |"
    echo "|---|---|---|---|---|---|"
    local subs declared w z ratio
    for subs in "${SUBS_LIST[@]}" 0; do
        declared=$((SESSIONS * subs))
        w=$(field weft "$declared" 3)
        z=$(field zenoh "$declared" 3)
        ratio=-
        if [[ $w =~ ^[0-9]+$ && $z =~ ^[0-9]+$ && $z -gt 0 ]]; then
            ratio=$(python3 -c "print(f'{$w / $z:.2f}x')")
        fi
        echo "| $declared | $(field weft "$declared" 4) | $(field zenoh "$declared" 4) | $w | $z | $ratio |"
    done
}
TABLE=$(table)
echo "$TABLE"
[[ -n "${BENCH_NO_WRITE:-}" ]] && exit 0

SECTION=$WORK/section.md
{
    echo "## Route lookups"
    echo
    echo "\`bench/routes.sh\` ($(date -u +%F), $(nproc) cores): $SESSIONS client sessions hold"
    echo "$(echo "${SUBS_LIST[*]}" | sed 's/ / or /g') subscriptions each (\`bench/0\`, \`bench/1\`..., weft-testkit's \`open_sessions\`,"
    echo "the same load for both routers). \"Declared in\" is the time from the first connection until"
    echo "the router has handled every declaration (each session's liveliness get on a key nothing"
    echo "matches is answered). Then a \`weft pub-thr $SIZE --keys $KEYS\` client publishes on"
    echo "\`bench/0\` to \`bench/$((KEYS - 1))\` in turn (each key matches one session's subscription)"
    echo "and a \`weft sub-thr -k 'bench/**'\` client measures the routed msg/s (median of 5 rounds"
    echo "of 200,000). The last row is the same publisher and subscriber without the sessions."
    echo
    echo "$TABLE"
    echo
}>"$SECTION"
write_section "Route lookups" "$SECTION"
