/*
 * The platform types of the bare-metal port of Zenoh-Pico used by the
 * footprint comparison (scripts/footprint_upstream.sh): Zenoh-Pico's
 * system/common/platform.h includes this file when ZENOH_GENERIC is defined.
 * The port (platform.c) runs on weft-pico's boards (boards/<target>/, the
 * board contract of src/platform/baremetal/board.h): single-threaded, the
 * only link a serial line on one of the board's UARTs.
 */
#ifndef WEFT_UPSTREAM_GENERIC_PLATFORM_H
#define WEFT_UPSTREAM_GENERIC_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "zenoh-pico/config.h"

#if Z_FEATURE_MULTI_THREAD == 1
#error "the bare-metal port is single-threaded"
#endif

/* microseconds since board_init */
typedef uint64_t z_clock_t;
typedef uint64_t z_time_t;

/* a UART: the board's index, or -1 when closed */
typedef struct {
    int _uart;
} _z_sys_net_socket_t;

/* no network endpoints (serial only) */
typedef struct {
    int _unused;
} _z_sys_net_endpoint_t;

#endif
