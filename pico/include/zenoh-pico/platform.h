/*
 * The platform contract: everything weft-pico needs from the system.
 *
 * A port implements the functions below (8 in a single-thread build, 14 with
 * Z_FEATURE_MULTI_THREAD, 18 with Z_FEATURE_AUTO_BATCHING too) in
 * src/platform/<name>/ and provides the header zenoh-pico/platform/<name>.h
 * defining the types:
 *
 *   _z_sys_socket_t  one open link (TCP stream, UDP socket or UART)
 *   _z_mutex_t, _z_task_t   (multi-thread builds only; the mutex is recursive)
 *   _z_event_t       (automatic batching only)
 *
 * The POSIX port is the reference (src/platform/posix/). README.md has a
 * porting guide. None of these functions is called with a lock held except
 * _z_net_send.
 */
#ifndef ZENOH_PICO_PLATFORM_H
#define ZENOH_PICO_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zenoh-pico/api/result.h"
#include "zenoh-pico/config.h"

#ifndef ZP_PLATFORM_HEADER
#include "zenoh-pico/platform/posix.h"
#else
#include ZP_PLATFORM_HEADER
#endif

/* An endpoint parsed from a locator such as "tcp/192.168.1.2:7447" or
 * "udp/224.0.0.225:7447#iface=eth0". Only IPv4 addresses are supported. */
#define _Z_LINK_TCP 1
#define _Z_LINK_UDP 2
#define _Z_LINK_UDP_MULTICAST 3
#define _Z_LINK_UDP_SCOUT 4 /* scouting: any local port, sends to the group, receives unicast */
#define _Z_LINK_SERIAL 5    /* "serial/<device>#baudrate=N": a UART, raw bytes both ways */
typedef struct {
    uint8_t kind;
    uint8_t addr[4];
    uint16_t port;
    char iface[16]; /* multicast: interface name ("" = default) */
#if Z_FEATURE_LINK_SERIAL == 1
    char dev[ZP_SERIAL_DEV_CAPACITY]; /* serial: the device ("/dev/ttyUSB0", "uart0"...) */
    uint32_t baudrate;                /* serial: bits per second */
#endif
} _z_endpoint_t;

/* ---- system (always) ---- */

/* Monotonic microseconds since an arbitrary origin. */
uint64_t _z_clock_us(void);
/* Sleeps for at least `ms` milliseconds. */
void _z_sleep_ms(uint32_t ms);
/* Fills `buf` with random bytes (need not be cryptographic). */
void _z_random_fill(void *buf, size_t len);

/* ---- network (always) ---- */

/*
 * Opens a link. TCP: connect. UDP unicast: a connected datagram socket.
 * UDP multicast: a socket bound to the group port, member of the group on
 * ep->iface, that sends to the group and does not loop back its own datagrams.
 * UDP scout: a socket on any local port that sends to the group (through
 * ep->iface, TTL 1) and receives the unicast answers.
 * Serial (Z_FEATURE_LINK_SERIAL): the UART ep->dev at ep->baudrate, 8 data
 * bits, no parity, one stop bit, no flow control, raw (no character
 * processing), with whatever it had received emptied. The library does the
 * framing: _z_net_send writes bytes as they are and _z_net_recv returns the
 * bytes received so far (at least one, or 0 on timeout), like a TCP stream.
 */
z_result_t _z_net_open(_z_sys_socket_t *sock, const _z_endpoint_t *ep);
/* Sends all `len` bytes (one datagram on UDP). */
z_result_t _z_net_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len);
/*
 * Congestion control DROP: sends like _z_net_send, unless the link cannot
 * take the first byte within `wait_ms`; then nothing is sent and the result
 * is _Z_NET_BUSY. Once a byte is out, the rest is sent whatever it takes (a
 * stream never carries half a batch).
 */
#define _Z_NET_BUSY 1
z_result_t _z_net_try_send(const _z_sys_socket_t *sock, const uint8_t *buf, size_t len, uint32_t wait_ms);
/*
 * Receives up to `len` bytes, waiting at most `timeout_ms`. Returns the number
 * of bytes (a whole datagram on UDP), 0 on timeout, or a negative error when
 * the link is closed or failed. `src` (may be NULL) receives a 6-byte source
 * address (IPv4 + port) for datagram sockets.
 */
int32_t _z_net_recv(const _z_sys_socket_t *sock, uint8_t *buf, size_t len, uint32_t timeout_ms, uint8_t src[6]);
/* Closes the link. */
void _z_net_close(_z_sys_socket_t *sock);

/* Monotonic milliseconds (derived, in the library). */
uint64_t _z_clock_ms(void);
/* x / 1000 with 32-bit divisions only: no 64-bit division routine of the C
 * runtime (about 700 B on a Cortex-M) is linked for the clock (in the library). */
uint64_t _z_div1000(uint64_t x);

#if Z_FEATURE_MULTI_THREAD == 1
/* ---- threads (multi-thread builds only) ---- */

/* Initialises a recursive mutex. */
z_result_t _z_mutex_init(_z_mutex_t *m);
z_result_t _z_mutex_lock(_z_mutex_t *m);
z_result_t _z_mutex_unlock(_z_mutex_t *m);
void _z_mutex_drop(_z_mutex_t *m);
/* Starts `fn(arg)` in a new task. */
z_result_t _z_task_start(_z_task_t *t, void *(*fn)(void *), void *arg);
/* Waits for a task to end. */
void _z_task_join(_z_task_t *t);
#endif

#if Z_FEATURE_AUTO_BATCHING == 1
/* ---- wake-up event (automatic batching only) ----
 * A binary, auto-clearing event (an RTOS binary semaphore or task
 * notification is one): setting it wakes one waiter, or the next thread to
 * wait when nobody waits yet; setting it twice before a wait counts once. */
z_result_t _z_event_init(_z_event_t *e);
void _z_event_set(_z_event_t *e);
/* Waits until the event is set or `timeout_ms` passed; clears it. True when it was set. */
bool _z_event_wait(_z_event_t *e, uint32_t timeout_ms);
void _z_event_drop(_z_event_t *e);
#endif

#endif
