#!/bin/sh
# Cross-builds weft-pico for a Cortex-M4 (arm-none-eabi-gcc, newlib-nano, no
# LTO) and reports the library's own code and data kept by the linker for:
#   (a) minimal publisher: open, declare publisher, put, close (TCP client, every other feature off)
#   (b) full client: pub, sub, get, queryable, liveliness, fragmentation, batching, QoS (TCP client)
# The platform contract is stubbed (footprint/stubs.c) and not counted, nor is libc.
# Then the real firmware images (boards/, scripts/firmware.sh) per target, one line each:
#   target=NAME image=minimal_publisher|full_client flash=N ram=N stack=N
# (the stack's high-water mark from a run under QEMU against weftd's serial listener;
# stack=NA when socat, weftd or QEMU is missing).
# Last line: minimal_publisher_flash=N full_client_flash=M minimal_publisher_ram=R
set -eu
PICO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${WEFT_FOOTPRINT_DIR:-$PICO/build-footprint}
CC=arm-none-eabi-gcc
if ! command -v $CC >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y -qq gcc-arm-none-eabi libnewlib-arm-none-eabi >/dev/null
    else
        echo "footprint: $CC not found (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)" >&2
        exit 1
    fi
fi
ARCH="-mcpu=cortex-m4 -mthumb -Os -ffunction-sections -fdata-sections"
WARN="-std=c99 -Wall -Wextra -Werror -Wshadow"

DEFAULTS="Z_FEATURE_PUBLICATION=1 Z_FEATURE_SUBSCRIPTION=1 Z_FEATURE_QUERY=1 Z_FEATURE_QUERYABLE=1
Z_FEATURE_LIVELINESS=1 Z_FEATURE_FRAGMENTATION=1 Z_FEATURE_BATCHING=1 Z_FEATURE_MULTICAST_TRANSPORT=0
Z_FEATURE_LINK_TCP=1 Z_FEATURE_LINK_UDP_UNICAST=0 Z_FEATURE_LINK_SERIAL=0 Z_FEATURE_MULTI_THREAD=0 Z_FEATURE_AUTO_BATCHING=0 Z_FEATURE_AUTO_RECONNECT=1
Z_FEATURE_SCOUTING=0 Z_FEATURE_QOS=1
ZP_MALLOC=0 ZP_CODEC_ALL=0 Z_BATCH_UNICAST_SIZE=1024 Z_TX_QUEUE_BATCHES=1 Z_BATCH_MULTICAST_SIZE=1024 Z_BATCH_MULTICAST_RX_SIZE=1024 Z_FRAG_MAX_SIZE=4096 ZP_KEYEXPR_CAPACITY=64
ZP_MAX_SESSIONS=1 ZP_MAX_PUBLISHERS=4 ZP_MAX_SUBSCRIBERS=4 ZP_MAX_QUERYABLES=4 ZP_MAX_PENDING_QUERIES=4 ZP_MAX_OPEN_QUERIES=2
ZP_MAX_TOKENS=4 ZP_MAX_REMOTE_TOKENS=8 ZP_MAX_PEERS=4 ZP_POOL_BLOCKS=4 ZP_POOL_BLOCK_SIZE=256"

MINIMAL="Z_FEATURE_SUBSCRIPTION=0 Z_FEATURE_QUERY=0 Z_FEATURE_QUERYABLE=0 Z_FEATURE_LIVELINESS=0
Z_FEATURE_FRAGMENTATION=0 Z_FEATURE_BATCHING=0 Z_FEATURE_AUTO_RECONNECT=0 Z_FEATURE_QOS=0 ZP_MAX_PUBLISHERS=1
ZP_POOL_BLOCKS=1 ZP_POOL_BLOCK_SIZE=64"
FULL=""

# build NAME APP OVERRIDES -> prints "text data bss ram" of the library
build() {
    name=$1 app=$2 overrides=$3
    dir=$OUT/$name
    rm -rf "$dir" && mkdir -p "$dir/include/zenoh-pico" "$dir/obj"
    sedargs="" # overrides come first: the first substitution wins
    for kv in $overrides $DEFAULTS; do sedargs="$sedargs -e s/@${kv%%=*}@/${kv#*=}/g"; done
    # shellcheck disable=SC2086
    sed $sedargs "$PICO/include/zenoh-pico/config.h.in" > "$dir/include/zenoh-pico/config.h"
    if grep -q '@[A-Z_]*@' "$dir/include/zenoh-pico/config.h"; then echo "unset config value" >&2; exit 1; fi
    CFLAGS="$ARCH $WARN -I$dir/include -I$PICO/include -I$PICO/footprint -DZP_PLATFORM_HEADER=\"platform_stub.h\""
    for src in "$PICO"/src/codec/*.c "$PICO"/src/keyexpr/*.c "$PICO"/src/mem/pool.c "$PICO"/src/mem/text.c "$PICO"/src/transport/*.c \
               "$PICO"/src/session/*.c "$PICO"/src/api/*.c; do
        obj="$dir/obj/$(basename "$(dirname "$src")")_$(basename "$src" .c).o"
        # shellcheck disable=SC2086
        $CC $CFLAGS -c "$src" -o "$obj"
    done
    arm-none-eabi-ar rcs "$dir/libzenohpico.a" "$dir"/obj/*.o
    # shellcheck disable=SC2086
    $CC $CFLAGS -c "$PICO/footprint/$app.c" -o "$dir/app.o"
    # shellcheck disable=SC2086
    $CC $CFLAGS -c "$PICO/footprint/stubs.c" -o "$dir/stubs.o"
    # shellcheck disable=SC2086
    $CC $ARCH --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections -Wl,-Map="$dir/$app.map" \
        "$dir/app.o" "$dir/stubs.o" "$dir/libzenohpico.a" -o "$dir/$app.elf"
    # shellcheck disable=SC2086
    $CC $CFLAGS -c "$PICO/src/mem/memreport.c" -o "$dir/memreport.o"
    sh "$PICO/scripts/memreport.sh" arm-none-eabi-nm "$dir/memreport.o" > "$dir/memreport.txt"
    python3 - "$dir/$app.map" > "$dir/sizes.txt" <<'PY'
import re, sys
text = data = bss = 0
started = False
pending = None
for line in open(sys.argv[1]):
    if line.startswith("Linker script and memory map"):
        started = True
        continue
    if not started:
        continue
    m = re.match(r"^ (\.\S+|COMMON)\s*$", line)
    if m:
        pending = m.group(1)
        continue
    m = re.match(r"^ (\.\S+|COMMON)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+)", line)
    if not m:
        pending = None
        continue
    sec = m.group(1) or pending
    pending = None
    if sec is None or "libzenohpico.a(" not in m.group(3):
        continue
    size = int(m.group(2), 16)
    if sec.startswith((".text", ".rodata")):
        text += size
    elif sec.startswith(".data"):
        data += size
    elif sec.startswith(".bss") or sec == "COMMON":
        bss += size
print(text, data, bss)
PY
}

mkdir -p "$OUT"
build minimal_publisher min_pub "$MINIMAL"
build full_client full_client "$FULL"
read -r MIN_TEXT MIN_DATA MIN_BSS < "$OUT/minimal_publisher/sizes.txt"
read -r FULL_TEXT FULL_DATA FULL_BSS < "$OUT/full_client/sizes.txt"
MIN_RAM=$(sed -n 's/^ram_total=//p' "$OUT/minimal_publisher/memreport.txt")

echo "weft-pico footprint: arm-none-eabi-gcc $($CC -dumpversion), Cortex-M4 -Os, --gc-sections, no LTO"
echo "library code and data kept by the linker (bytes; platform stubs and libc not counted)"
printf '%-20s %8s %8s %8s %12s\n' build text data bss flash
printf '%-20s %8d %8d %8d %12d\n' minimal_publisher "$MIN_TEXT" "$MIN_DATA" "$MIN_BSS" $((MIN_TEXT + MIN_DATA))
printf '%-20s %8d %8d %8d %12d\n' full_client "$FULL_TEXT" "$FULL_DATA" "$FULL_BSS" $((FULL_TEXT + FULL_DATA))
echo
echo "minimal publisher pools (1 KiB batch):"
sed '/^ram_total=/d' "$OUT/minimal_publisher/memreport.txt"
echo "full client pools:"
sed '/^ram_total=/d' "$OUT/full_client/memreport.txt"

# ---- real images: the firmware of boards/ (startup, board, bare-metal port, weft-pico, the
# application, libc parts), serial link, measured whole; the stack's high-water mark is read
# from a run under QEMU against weftd's serial listener (socat pseudo-terminals)
FW_MINIMAL="$MINIMAL"
WEFTD=${WEFT_WEFTD:-${CARGO_TARGET_DIR:-$PICO/../target}/debug/weftd}
RUN_DIR=""
SOCAT_PID=""
WEFTD_PID=""
stop_line() {
    [ -z "$WEFTD_PID" ] || kill "$WEFTD_PID" 2>/dev/null || true
    [ -z "$SOCAT_PID" ] || kill "$SOCAT_PID" 2>/dev/null || true
    WEFTD_PID=""
    SOCAT_PID=""
}
trap stop_line EXIT
# a serial line to weftd: LINE is the client's end, or empty when a tool is missing
LINE=""
start_line() {
    command -v socat >/dev/null 2>&1 && [ -x "$WEFTD" ] || return 0
    RUN_DIR=$(mktemp -d /tmp/weft-footprint-XXXXXX)
    socat pty,raw,echo=0,link="$RUN_DIR/A" pty,raw,echo=0,link="$RUN_DIR/B" >/dev/null 2>&1 &
    SOCAT_PID=$!
    i=0
    while [ ! -e "$RUN_DIR/B" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    "$WEFTD" -l "serial/$RUN_DIR/B#baudrate=115200" --no-multicast-scouting >"$RUN_DIR/weftd.log" 2>&1 &
    WEFTD_PID=$!
    i=0
    while ! grep -q "listening on" "$RUN_DIR/weftd.log" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    LINE=$RUN_DIR/A
}
# image TARGET NAME APP CONFIG ARGS... -> "target=... image=... flash=N ram=N stack=N"
image() {
    target=$1 name=$2 app=$3 config=$4
    shift 4
    dir=$OUT/image-$target-$name
    stack=NA
    if [ -n "$LINE" ] && command -v "qemu-system-$( [ "$target" = cortex-m4 ] && echo arm || echo riscv32)" >/dev/null 2>&1; then
        FIRMWARE_CONFIG="$config" WEFT_FIRMWARE_DIR=$dir QEMU_TIMEOUT=60 \
            sh "$PICO/scripts/qemu.sh" "$target" "$app" "$LINE" "$@" >"$dir.log" 2>&1 || true
        stack=$(sed -n 's/^STACK \([0-9]*\) of .*/\1/p' "$dir.log")
        grep -q '^EXIT 0' "$dir.log" || { cat "$dir.log" >&2; echo "footprint: the $target $name image failed" >&2; exit 1; }
    else
        FIRMWARE_CONFIG="$config" sh "$PICO/scripts/firmware.sh" "$target" "$app" "$dir" "$@" >/dev/null
    fi
    prefix=arm-none-eabi
    [ "$target" = riscv32 ] && prefix=riscv64-unknown-elf
    $prefix-readelf -SW "$dir/$app.elf" | python3 -c '
import sys
flash = ram = 0
for line in sys.stdin:
    parts = line.replace("[ ", "[").split()
    if len(parts) < 8 or not parts[0].strip("[]").isdigit() or parts[1] == "NULL":
        continue
    name, kind, size, flags = parts[1], parts[2], int(parts[5], 16), parts[7]
    if "A" not in flags or name == ".stack":
        continue
    if kind != "NOBITS":
        flash += size  # code, constants, and the initial values of .data
    if "W" in flags:
        ram += size  # .data and .bss
print(flash, ram)' >"$dir.sizes"
    read -r flash ram <"$dir.sizes"
    [ "$stack" = NA ] || ram=$((ram + stack))
    echo "target=$target image=$name flash=$flash ram=$ram stack=$stack"
}
if command -v riscv64-unknown-elf-gcc >/dev/null 2>&1; then TARGETS="cortex-m4 riscv32"; else TARGETS=cortex-m4; fi
start_line
echo
echo "real images (whole firmware, serial link; flash = text+data, ram = data+bss+stack high-water mark):"
[ -n "$LINE" ] || echo "(stack=NA: socat, weftd ($WEFTD) or QEMU missing, the images were not run)"
for t in $TARGETS; do
    image "$t" minimal_publisher z_pub "$FW_MINIMAL" -k demo/footprint -n 3 -i 100
    image "$t" full_client full_client ""
done
stop_line
rm -rf "$RUN_DIR"
echo "minimal_publisher_flash=$((MIN_TEXT + MIN_DATA)) full_client_flash=$((FULL_TEXT + FULL_DATA)) minimal_publisher_ram=$MIN_RAM"
