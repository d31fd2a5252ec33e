#!/bin/sh
# Builds a weft-pico firmware image for a bare-metal target (boards/TARGET),
# the single-threaded run model, serial link only.
#
#   scripts/firmware.sh TARGET APP OUTDIR [ARGS...]
#
# TARGET  cortex-m4 (QEMU mps2-an386, arm-none-eabi-gcc + newlib-nano)
#         riscv32   (QEMU sifive_e, riscv64-unknown-elf-gcc + picolibc, rv32imac)
# APP     z_pub, z_sub, z_get, z_queryable, z_liveliness (boards/apps/APP.c)
# ARGS    baked into the image as the application's argv (-e LOCATOR -k KEY -v VALUE -n COUNT ...)
#
# Environment: FIRMWARE_CONFIG="NAME=VALUE ..." overrides the configuration
# below (config.h.in names); FIRMWARE_CFLAGS adds compiler flags (e.g. a
# board's -DMTIME_HZ=32768u). Writes OUTDIR/APP.elf and OUTDIR/APP.map; prints
# the image's path.
set -eu
PICO=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 TARGET APP OUTDIR [ARGS...]" >&2; exit 2; }
TARGET=$1 APP=$2 OUT=$3
shift 3

case $TARGET in
cortex-m4)
    CC=arm-none-eabi-gcc
    ARCH="-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
    LIBC="--specs=nano.specs"
    ;;
riscv32)
    CC=riscv64-unknown-elf-gcc
    ARCH="-march=rv32imac -mabi=ilp32 -mcmodel=medlow"
    LIBC="--specs=picolibc.specs"
    ;;
*) echo "unknown target $TARGET (cortex-m4, riscv32)" >&2; exit 2 ;;
esac
command -v $CC >/dev/null 2>&1 || { echo "$CC not found (scripts/qemu.sh installs it)" >&2; exit 1; }
BOARD=$PICO/boards/$TARGET
APPSRC=$PICO/boards/apps/$APP.c
[ -f "$APPSRC" ] || { echo "no application $APPSRC" >&2; exit 2; }

# The image's configuration: every client feature, serial link only, 1 KiB
# batches, fixed pools (no malloc), single-threaded.
DEFAULTS="Z_FEATURE_PUBLICATION=1 Z_FEATURE_SUBSCRIPTION=1 Z_FEATURE_QUERY=1 Z_FEATURE_QUERYABLE=1
Z_FEATURE_LIVELINESS=1 Z_FEATURE_FRAGMENTATION=1 Z_FEATURE_BATCHING=1 Z_FEATURE_MULTICAST_TRANSPORT=0
Z_FEATURE_LINK_TCP=0 Z_FEATURE_LINK_UDP_UNICAST=0 Z_FEATURE_LINK_SERIAL=1 Z_FEATURE_MULTI_THREAD=0
Z_FEATURE_AUTO_BATCHING=0 Z_FEATURE_AUTO_RECONNECT=1 Z_FEATURE_SCOUTING=0 Z_FEATURE_QOS=1
ZP_MALLOC=0 ZP_CODEC_ALL=0 Z_BATCH_UNICAST_SIZE=1500 Z_TX_QUEUE_BATCHES=1 Z_BATCH_MULTICAST_SIZE=1500
Z_BATCH_MULTICAST_RX_SIZE=1500 Z_FRAG_MAX_SIZE=2048 ZP_KEYEXPR_CAPACITY=64
ZP_MAX_SESSIONS=1 ZP_MAX_PUBLISHERS=4 ZP_MAX_SUBSCRIBERS=4 ZP_MAX_QUERYABLES=4 ZP_MAX_PENDING_QUERIES=4
ZP_MAX_OPEN_QUERIES=2 ZP_MAX_TOKENS=4 ZP_MAX_REMOTE_TOKENS=8 ZP_MAX_PEERS=4 ZP_POOL_BLOCKS=4 ZP_POOL_BLOCK_SIZE=256"

mkdir -p "$OUT/include/zenoh-pico" "$OUT/obj" "$OUT/obj-$APP"
sedargs="" # overrides come first: the first substitution wins
for kv in ${FIRMWARE_CONFIG:-} $DEFAULTS; do sedargs="$sedargs -e s/@${kv%%=*}@/${kv#*=}/g"; done
# shellcheck disable=SC2086
sed $sedargs "$PICO/include/zenoh-pico/config.h.in" > "$OUT/include/zenoh-pico/config.h.new"
if grep -q '@[A-Z_]*@' "$OUT/include/zenoh-pico/config.h.new"; then echo "unset config value" >&2; exit 1; fi
# keep the old file (and its date) when nothing changed
if cmp -s "$OUT/include/zenoh-pico/config.h.new" "$OUT/include/zenoh-pico/config.h"; then
    rm "$OUT/include/zenoh-pico/config.h.new"
else
    mv "$OUT/include/zenoh-pico/config.h.new" "$OUT/include/zenoh-pico/config.h"
    rm -f "$OUT"/obj/*.o "$OUT"/obj-*/*.o
fi

# the application's arguments, as C strings
{
    echo "/* written by scripts/firmware.sh */"
    printf 'const char *const app_argv[] = {"%s"' "$APP"
    for a in "$@"; do printf ', "%s"' "$(printf '%s' "$a" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"; done
    echo ', 0};'
    echo "const int app_argc = $(($# + 1));"
} > "$OUT/obj-$APP/args.c"

OPT="-Os -g -ffunction-sections -fdata-sections"
WARN="-std=c99 -Wall -Wextra -Werror -Wshadow"
CFLAGS="$ARCH $OPT $WARN ${FIRMWARE_CFLAGS:-} $LIBC -I$OUT/include -I$PICO/include -I$PICO/src/platform/baremetal
 -DZP_PLATFORM_HEADER=\"zenoh-pico/platform/baremetal.h\""
# other flags than last time: everything is compiled again
if [ "$(cat "$OUT/cflags" 2>/dev/null)" != "$CFLAGS" ]; then
    rm -f "$OUT"/obj/*.o "$OUT"/obj-*/*.o
    printf '%s' "$CFLAGS" > "$OUT/cflags"
fi
# the newest header: an object older than it is compiled again (a header's change, a
# struct's layout among them, reaches every file that includes it)
NEWEST_HEADER=$(find "$PICO/src" "$PICO/include" "$PICO/boards" -name '*.h' -exec ls -t {} + | head -n 1)
OBJS=""
# library, port and board objects are shared by the applications of OUTDIR
for src in "$PICO"/src/codec/*.c "$PICO"/src/keyexpr/*.c "$PICO"/src/mem/pool.c "$PICO"/src/mem/text.c "$PICO"/src/transport/*.c \
           "$PICO"/src/session/*.c "$PICO"/src/api/*.c "$PICO"/src/platform/baremetal/*.c \
           "$PICO"/boards/common/*.c "$BOARD"/*.c "$BOARD"/*.S "$APPSRC" "$OUT/obj-$APP/args.c"; do
    [ -f "$src" ] || continue
    base=$(basename "$(dirname "$src")")_$(basename "$src")
    case $src in
    "$APPSRC" | */args.c) obj="$OUT/obj-$APP/${base%.*}.o" ;;
    *) obj="$OUT/obj/${base%.*}.o" ;;
    esac
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$PICO/include/zenoh-pico/config.h.in" -nt "$obj" ] ||
        [ "$NEWEST_HEADER" -nt "$obj" ]; then
        # shellcheck disable=SC2086
        $CC $CFLAGS -c "$src" -o "$obj"
    fi
    OBJS="$OBJS $obj"
done
# shellcheck disable=SC2086
$CC $ARCH $LIBC -nostartfiles -T "$BOARD/link.ld" -Wl,--gc-sections -Wl,-Map="$OUT/$APP.map" $OBJS -o "$OUT/$APP.elf"
echo "$OUT/$APP.elf"
