/*
 * A bare-metal port of Zenoh-Pico (its generic platform, ZENOH_GENERIC) over
 * weft-pico's board contract (src/platform/baremetal/board.h), for the
 * footprint comparison of scripts/footprint_upstream.sh: the system layer
 * (clock, sleep, random, memory) and the serial link's byte I/O on one of
 * the board's UARTs. Written against Zenoh-Pico's public platform headers;
 * single-threaded, memory from the C library's malloc (heap.c gives it its
 * arena).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../src/platform/baremetal/board.h"
#include "zenoh-pico/link/transport/serial.h"
#include "zenoh-pico/system/common/platform.h"

/* ---- random: xorshift32 seeded from the board at first use ---- */
static uint32_t rng_state;

uint32_t z_random_u32(void) {
    if (rng_state == 0) rng_state = (board_entropy() ^ (uint32_t)board_clock_us() ^ 0x2545F491u) | 1u;
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

uint8_t z_random_u8(void) { return (uint8_t)(z_random_u32() >> 24); }

uint16_t z_random_u16(void) { return (uint16_t)(z_random_u32() >> 16); }

uint64_t z_random_u64(void) { return ((uint64_t)z_random_u32() << 32) | z_random_u32(); }

void z_random_fill(void *buf, size_t len) {
    uint8_t *p = (uint8_t *)buf;
    for (size_t i = 0; i < len; i++) p[i] = z_random_u8();
}

/* ---- memory ---- */
void *z_malloc(size_t size) { return malloc(size); }

void *z_realloc(void *ptr, size_t size) { return realloc(ptr, size); }

void z_free(void *ptr) { free(ptr); }

/* ---- sleep: busy waits on the board's clock ---- */
z_result_t z_sleep_us(size_t time) {
    uint64_t until = board_clock_us() + (uint64_t)time;
    while (board_clock_us() < until) {
    }
    return _Z_RES_OK;
}

z_result_t z_sleep_ms(size_t time) { return z_sleep_us(time * 1000u); }

z_result_t z_sleep_s(size_t time) { return z_sleep_us(time * 1000000u); }

/* ---- monotonic clock: microseconds since board_init ---- */
z_clock_t z_clock_now(void) { return board_clock_us(); }

unsigned long zp_clock_elapsed_us_since(z_clock_t *instant, z_clock_t *epoch) {
    return *instant > *epoch ? (unsigned long)(*instant - *epoch) : 0ul;
}

unsigned long zp_clock_elapsed_ms_since(z_clock_t *instant, z_clock_t *epoch) {
    return *instant > *epoch ? (unsigned long)((*instant - *epoch) / 1000u) : 0ul;
}

unsigned long zp_clock_elapsed_s_since(z_clock_t *instant, z_clock_t *epoch) {
    return *instant > *epoch ? (unsigned long)((*instant - *epoch) / 1000000u) : 0ul;
}

unsigned long z_clock_elapsed_us(z_clock_t *time) {
    z_clock_t now = board_clock_us();
    return zp_clock_elapsed_us_since(&now, time);
}

unsigned long z_clock_elapsed_ms(z_clock_t *time) {
    z_clock_t now = board_clock_us();
    return zp_clock_elapsed_ms_since(&now, time);
}

unsigned long z_clock_elapsed_s(z_clock_t *time) {
    z_clock_t now = board_clock_us();
    return zp_clock_elapsed_s_since(&now, time);
}

void z_clock_advance_us(z_clock_t *clock, unsigned long duration) { *clock += duration; }

void z_clock_advance_ms(z_clock_t *clock, unsigned long duration) { *clock += (uint64_t)duration * 1000u; }

void z_clock_advance_s(z_clock_t *clock, unsigned long duration) { *clock += (uint64_t)duration * 1000000u; }

/* ---- wall clock: none on these boards, time since boot stands in ---- */
z_time_t z_time_now(void) { return board_clock_us(); }

const char *z_time_now_as_str(char *const buf, unsigned long buflen) {
    if (buflen > 0) buf[0] = '\0';
    return buf;
}

unsigned long z_time_elapsed_us(z_time_t *time) { return z_clock_elapsed_us(time); }

unsigned long z_time_elapsed_ms(z_time_t *time) { return z_clock_elapsed_ms(time); }

unsigned long z_time_elapsed_s(z_time_t *time) { return z_clock_elapsed_s(time); }

z_result_t _z_get_time_since_epoch(_z_time_since_epoch *t) {
    uint64_t us = board_clock_us();
    t->secs = (uint32_t)(us / 1000000u);
    t->nanos = (uint32_t)(us % 1000000u) * 1000u;
    return _Z_RES_OK;
}

/* ---- sockets: the only socket is a UART ---- */
void _z_socket_close(_z_sys_net_socket_t *sock) {
    if (sock->_uart >= 0) board_uart_close(sock->_uart);
    sock->_uart = -1;
}

z_result_t _z_socket_set_blocking(const _z_sys_net_socket_t *sock, bool blocking) {
    (void)sock;
    (void)blocking;
    return _Z_RES_OK;
}

/* ---- the serial link's bytes ---- */
z_result_t _z_serial_open_from_dev(_z_sys_net_socket_t *sock, const char *dev, uint32_t baudrate) {
    sock->_uart = board_uart_open(dev, baudrate);
    return sock->_uart >= 0 ? _Z_RES_OK : _Z_ERR_GENERIC;
}

/* pin numbers mean nothing to these boards: only "uartN" devices */
z_result_t _z_serial_open_from_pins(_z_sys_net_socket_t *sock, uint32_t txpin, uint32_t rxpin, uint32_t baudrate) {
    (void)txpin;
    (void)rxpin;
    (void)baudrate;
    sock->_uart = -1;
    return _Z_ERR_GENERIC;
}

z_result_t _z_serial_listen_from_dev(_z_sys_net_socket_t *sock, const char *dev, uint32_t baudrate) {
    return _z_serial_open_from_dev(sock, dev, baudrate);
}

z_result_t _z_serial_listen_from_pins(_z_sys_net_socket_t *sock, uint32_t txpin, uint32_t rxpin, uint32_t baudrate) {
    return _z_serial_open_from_pins(sock, txpin, rxpin, baudrate);
}

void _z_serial_close(_z_sys_net_socket_t *sock) { _z_socket_close(sock); }

/* Up to len bytes, at least one: SIZE_MAX when nothing came within
 * Z_CONFIG_SOCKET_TIMEOUT ms (the single-threaded read task then returns and
 * the application goes on). */
size_t _z_serial_read(_z_sys_net_socket_t sock, uint8_t *ptr, size_t len) {
    if (sock._uart < 0 || len == 0) return SIZE_MAX;
    uint64_t until = board_clock_us() + (uint64_t)Z_CONFIG_SOCKET_TIMEOUT * 1000u;
    size_t n = 0;
    for (;;) {
        int c;
        while (n < len && (c = board_uart_getc(sock._uart)) >= 0) ptr[n++] = (uint8_t)c;
        if (n > 0) return n;
        if (board_clock_us() >= until) return SIZE_MAX;
    }
}

size_t _z_serial_write(_z_sys_net_socket_t sock, const uint8_t *ptr, size_t len) {
    if (sock._uart < 0) return SIZE_MAX;
    for (size_t i = 0; i < len; i++) board_uart_putc(sock._uart, ptr[i]);
    return len;
}
