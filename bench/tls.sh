#!/usr/bin/env bash
# weft beside Eclipse Zenoh 1.10.2 over secured links, peer to peer on loopback: the same
# throughput run (`weft sub-thr`/`pub-thr` against bench/compare's `zsub_thr`/`zpub_thr`,
# congestion control block, median of the rounds) over tcp/ (the reference), tls/ and
# quic/ endpoints, 8 B, 1 KiB and 64 KiB payloads. Both use the same certificates (made
# with openssl by crates/weftd/secure/make-certs.sh) and the same configuration files,
# with Zenoh's keys: the listener presents its certificate, the connecting side checks
# it against the CA. Prints the table and writes the "TLS and QUIC" section of
# bench/RESULTS.md.
#
# Environment (all optional):
#   COMPARE_TARGET_DIR  cargo target directory of bench/compare (default target/compare)
#   BENCH_PORT          first port used on 127.0.0.1 (default 18500)
#   BENCH_ROUNDS        rounds per point (default 5)
#   BENCH_NO_WRITE=1    print the table without touching bench/RESULTS.md
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

COMPARE_TARGET_DIR=${COMPARE_TARGET_DIR:-$ROOT/target/compare}
PORT=${BENCH_PORT:-18500}
ROUNDS=${BENCH_ROUNDS:-5}
SIZES=(8 1024 65536)
PROTOCOLS=(tcp tls quic)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/weft-tls-bench.XXXXXX")
OUT_DIR=$WORK

log "== building weft and bench/compare (Zenoh with TLS and QUIC)"
cargo build --release -p weft-cli
CARGO_TARGET_DIR=$COMPARE_TARGET_DIR cargo build --release --manifest-path bench/compare/Cargo.toml
WEFT=${CARGO_TARGET_DIR:-$ROOT/target}/release/weft
C=$COMPARE_TARGET_DIR/release

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

# thr SYSTEM PROTOCOL SIZE: sets THR_RATE.
thr() {
    local sys=$1 proto=$2 size=$3 samples
    samples=$(samples_for "$size")
    PORT=$((PORT + 1))
    local host=127.0.0.1
    [[ $proto != tcp ]] && host=localhost
    local listen="$proto/127.0.0.1:$PORT" connect="$proto/$host:$PORT"
    local common=(--samples "$samples" --rounds "$ROUNDS" --max-seconds 40)
    local sub pub
    case $sys in
        weft)
            sub=("$WEFT" sub-thr -l "$listen" -c "$WORK/listen.json5" --no-multicast-scouting "${common[@]}")
            pub=("$WEFT" pub-thr "$size" -e "$connect" -c "$WORK/connect.json5" --no-multicast-scouting --duration 60)
            ;;
        zenoh)
            sub=("$C/zsub_thr" -l "$listen" -c "$WORK/listen.json5" --no-multicast-scouting "${common[@]}")
            pub=("$C/zpub_thr" "$size" -e "$connect" -c "$WORK/connect.json5" --no-multicast-scouting --duration 60)
            ;;
    esac
    start sub 70 "${sub[@]}"
    local sub_pid=$STARTED
    if [[ $proto == quic ]]; then sleep 1; else wait_listen "$PORT" || true; fi
    start pub 70 "${pub[@]}"
    thr_collect "$sub_pid" "$STARTED" "$proto $sys $size B"
    log "  $proto $sys $size B: $THR_RATE msgs/s"
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
for proto in "${PROTOCOLS[@]}"; do
    for size in "${SIZES[@]}"; do
        thr weft "$proto" "$size"
        w=$THR_RATE
        thr zenoh "$proto" "$size"
        z=$THR_RATE
        ROWS+=("| $proto | $size B | $(num "$w") | $(num "$z") | $(ratio "$w" "$z") |")
    done
done

SECTION=$WORK/section.md
{
    echo "## TLS and QUIC"
    echo
    echo "Measured by \`bench/tls.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, Linux $(uname -r); weft at commit \`$(git rev-parse --short HEAD)\`, Eclipse Zenoh 1.10.2 (the \`zenoh\` crate with the TCP, TLS and QUIC links). Load average before: $LOAD_BEFORE."
    echo
    echo "Peer to peer on loopback, the subscriber listening, the publisher connecting (both in peer mode, multicast scouting off), the same certificates (an ECDSA P-256 CA and listener certificate made with openssl) and the same configuration files with Zenoh's keys for both: the listener presents its certificate, the connecting side verifies it against the CA (no client certificate). Messages received per second on \`test/thr\` (congestion control block), the median of $ROUNDS rounds; tcp/ is the reference."
    echo
    echo "| Link | Payload | weft msg/s | Zenoh msg/s | weft/Zenoh |"
    echo "|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
} >"$SECTION"
cat "$SECTION"
if [[ -z "${BENCH_NO_WRITE:-}" ]]; then
    write_section "TLS and QUIC" "$SECTION"
fi
