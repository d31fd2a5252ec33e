/*
 * The platform contract stubbed so that the footprint builds link. Not
 * counted in the library's size; a real port (lwIP, a modem driver...)
 * replaces it.
 */
#include <string.h>

#include "zenoh-pico/platform.h"

static volatile uint32_t ticks;

uint64_t _z_clock_us(void) { return ticks++; }
void _z_sleep_ms(uint32_t ms) { ticks += ms; }
void _z_random_fill(void *buf, size_t len) { memset(buf, 0x5a, len); }
z_result_t _z_net_open(_z_sys_socket_t *sock, const _z_endpoint_t *ep) {
    sock->fd = 0;
    sock->kind = ep->kind;
    return Z_OK;
}
z_result_t _z_net_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len) {
    (void)sock;
    (void)buf;
    (void)len;
    return Z_OK;
}
z_result_t _z_net_try_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len, uint32_t wait_ms) {
    (void)wait_ms;
    return _z_net_send(sock, buf, len);
}
int32_t _z_net_recv(const _z_sys_socket_t *sock, uint8_t *buf, size_t len, uint32_t timeout_ms, uint8_t src[6]) {
    (void)sock;
    (void)buf;
    (void)len;
    (void)timeout_ms;
    (void)src;
    return -1;
}
void _z_net_close(_z_sys_socket_t *sock) { sock->fd = -1; }
