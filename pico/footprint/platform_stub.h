/* Platform types for the footprint build (Cortex-M4, no OS). */
#ifndef WEFT_PICO_FOOTPRINT_PLATFORM_H
#define WEFT_PICO_FOOTPRINT_PLATFORM_H
#include <stdint.h>
typedef struct {
    int fd;
    uint8_t kind;
} _z_sys_socket_t;
#endif
