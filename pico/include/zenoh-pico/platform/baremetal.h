/* Types of the bare-metal port (src/platform/baremetal): one board, no OS,
 * the single-threaded run model (Z_FEATURE_MULTI_THREAD=0), serial links on
 * the board's UARTs. */
#ifndef ZENOH_PICO_PLATFORM_BAREMETAL_H
#define ZENOH_PICO_PLATFORM_BAREMETAL_H

#include <stdint.h>

#if Z_FEATURE_MULTI_THREAD == 1
#error "the bare-metal port runs single-threaded: build with Z_FEATURE_MULTI_THREAD=0"
#endif

typedef struct {
    int8_t uart; /* the board's UART index; -1 when closed */
    uint8_t kind;
} _z_sys_socket_t;

#endif
