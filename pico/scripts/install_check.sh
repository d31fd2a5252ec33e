#!/bin/sh
# Installs weft-pico into a temporary prefix and builds a small application against it
# twice, as an application written for Zenoh-Pico would: with CMake's
# find_package(zenohpico) and target zenohpico::lib, and with
# `pkg-config --cflags --libs zenohpico`. Both must link and run.
# Usage: pico/scripts/install_check.sh
set -eu
PICO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
BUILD=$WORK/build

cmake -S "$PICO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWEFT_PICO_TESTS=OFF \
    -DWEFT_PICO_EXAMPLES=OFF -DCMAKE_INSTALL_PREFIX="$WORK/prefix" >/dev/null
cmake --build "$BUILD" -j 2 >/dev/null
cmake --install "$BUILD" >/dev/null

mkdir -p "$WORK/app"
cat >"$WORK/app/app.c" <<'C'
#include <stdio.h>
#include "zenoh-pico.h"

int main(void) {
    z_owned_config_t config;
    if (z_config_default(&config) != Z_OK) return 1;
    z_drop(z_move(config));
    printf("linked\n");
    return 0;
}
C
cat >"$WORK/app/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.13)
project(app C)
find_package(zenohpico REQUIRED)
add_executable(app app.c)
target_link_libraries(app zenohpico::lib)
C
cmake -S "$WORK/app" -B "$WORK/app/build" -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/app/build" >/dev/null
[ "$("$WORK/app/build/app")" = linked ] || { echo "find_package build does not run" >&2; exit 1; }

export PKG_CONFIG_PATH="$WORK/prefix/lib/pkgconfig:$WORK/prefix/lib64/pkgconfig"
# On a line of its own, so that a failing pkg-config stops the script (set -e).
flags=$(pkg-config --cflags --libs zenohpico)
# shellcheck disable=SC2086
cc -std=c11 -o "$WORK/app/app-pc" "$WORK/app/app.c" $flags
[ "$("$WORK/app/app-pc")" = linked ] || { echo "pkg-config build does not run" >&2; exit 1; }
echo "install: find_package(zenohpico) and pkg-config zenohpico both build and run"
