/*
 * The bare-metal port: the platform contract (zenoh-pico/platform.h) over
 * one board (board.h), for the single-threaded run model. The only link is a
 * serial line on one of the board's UARTs; weft-pico does the framing.
 */
#include "board.h"
#include "zenoh-pico/platform.h"

uint64_t _z_clock_us(void) { return board_clock_us(); }

void _z_sleep_ms(uint32_t ms) {
    uint64_t until = board_clock_us() + (uint64_t)ms * 1000u;
    while (board_clock_us() < until) {
    }
}

/* xorshift32, seeded at first use from the board (the time since boot
 * varies with what came before, e.g. the wait for the router). */
void _z_random_fill(void *buf, size_t len) {
    static uint32_t state;
    if (state == 0) state = (board_entropy() ^ (uint32_t)board_clock_us() ^ 0x9E3779B9u) | 1u;
    uint8_t *p = (uint8_t *)buf;
    for (size_t i = 0; i < len; i++) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        p[i] = (uint8_t)(state >> 24);
    }
}

z_result_t _z_net_open(_z_sys_socket_t *sock, const _z_endpoint_t *ep) {
    sock->uart = -1;
    sock->kind = ep->kind;
#if Z_FEATURE_LINK_SERIAL == 1
    if (ep->kind != _Z_LINK_SERIAL) return Z_EUNSUPPORTED;
    int uart = board_uart_open(ep->dev, ep->baudrate);
    if (uart < 0) return Z_ECONFIG;
    sock->uart = (int8_t)uart;
    return Z_OK;
#else
    return Z_EUNSUPPORTED;
#endif
}

z_result_t _z_net_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len) {
    if (sock->uart < 0) return Z_ETRANSPORT;
    for (size_t i = 0; i < len; i++) board_uart_putc(sock->uart, buf[i]);
    return Z_OK;
}

/* A UART always drains: congestion control DROP waits like BLOCK. */
z_result_t _z_net_try_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len, uint32_t wait_ms) {
    (void)wait_ms;
    return _z_net_send(sock, buf, len);
}

int32_t _z_net_recv(const _z_sys_socket_t *sock, uint8_t *buf, size_t len, uint32_t timeout_ms, uint8_t src[6]) {
    (void)src;
    if (sock->uart < 0) return -1;
    uint64_t until = board_clock_us() + (uint64_t)timeout_ms * 1000u;
    size_t n = 0;
    for (;;) {
        int c;
        while (n < len && (c = board_uart_getc(sock->uart)) >= 0) buf[n++] = (uint8_t)c;
        if (n > 0 || board_clock_us() >= until) return (int32_t)n;
    }
}

void _z_net_close(_z_sys_socket_t *sock) {
    if (sock->uart >= 0) board_uart_close(sock->uart);
    sock->uart = -1;
}
