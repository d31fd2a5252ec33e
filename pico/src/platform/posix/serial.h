/* POSIX port, serial links: what network.c calls for a tty. */
#ifndef WEFT_PICO_POSIX_SERIAL_H
#define WEFT_PICO_POSIX_SERIAL_H

#include "zenoh-pico/platform.h"

#if Z_FEATURE_LINK_SERIAL == 1
/* Opens ep->dev raw at ep->baudrate (8N1, no flow control), its buffers emptied. */
z_result_t _z_posix_serial_open(_z_sys_socket_t *sock, const _z_endpoint_t *ep);
/* Writes all `len` bytes. */
z_result_t _z_posix_serial_write(int fd, const uint8_t *buf, size_t len);
#endif

#endif
