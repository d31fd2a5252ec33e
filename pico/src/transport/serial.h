/*
 * Serial link framing, byte-compatible with Zenoh's serial link (and weft's,
 * crates/weft-proto batch::serial; docs/protocol-notes.md "Serial link").
 *
 * A batch travels alone in one frame:
 *
 *   COBS( flags:1 | len:2 LE | payload:len | check:4 LE ) 0x00
 *
 * flags: bit 0 I (init), bit 1 A (ack), bit 2 R (reset), none on data frames.
 * check: a 32-bit CRC over the payload only (LSB first, register starting at
 * all ones and inverted at the end, feedback 0x04C11DB7 as written).
 * COBS is the original form; data ending right after a full block of 254
 * bytes gets a last block 01 of its own.
 *
 * Neither side keeps a copy of a stuffed frame: the encoder looks ahead in
 * the unstuffed bytes and hands the stuffed ones to a sink in small pieces,
 * the decoder unstuffs byte by byte straight into the receive buffer.
 */
#ifndef WEFT_PICO_TRANSPORT_SERIAL_H
#define WEFT_PICO_TRANSPORT_SERIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zenoh-pico/api/result.h"

#define _Z_SERIAL_FLAG_INIT 0x01u
#define _Z_SERIAL_FLAG_ACK 0x02u
#define _Z_SERIAL_FLAG_RESET 0x04u
/* Largest payload (Zenoh's serial MTU): the batch size over a serial link. */
#define _Z_SERIAL_MTU 1500u
/* flags, length and check around the payload */
#define _Z_SERIAL_OVERHEAD 7u
/* Stuffed bytes after which a frame without its delimiter is given up. */
#define _Z_SERIAL_MAX_WIRE 1517u

/* The check value of `len` bytes (0 for none). */
uint32_t _z_serial_crc(const uint8_t *p, size_t len);

/* Where the encoder puts stuffed bytes; returns Z_OK or stops the frame. */
typedef z_result_t (*_z_serial_sink_t)(void *ctx, const uint8_t *p, size_t len);

/* Stuffs and emits one frame (delimiter included) of `flags` and `payload`
 * (len <= _Z_SERIAL_MTU). */
z_result_t _z_serial_encode(uint8_t flags, const uint8_t *payload, size_t len, _z_serial_sink_t sink, void *ctx);

/* Frames out of the line's bytes. */
typedef struct {
    uint8_t *out;   /* where payloads are written */
    size_t cap;     /* its size */
    size_t got;     /* unstuffed bytes of the frame under way */
    size_t wire;    /* stuffed bytes since the last delimiter */
    uint32_t crc;   /* running check register over the payload */
    uint32_t check; /* the check value received */
    uint16_t len;   /* payload length (from its header) */
    uint8_t flags;
    uint8_t left;   /* bytes left in the COBS block (0: the next is a code) */
    bool zero;      /* a zero is implied before the next block */
    bool bad;       /* the frame under way is dropped (skipped to its delimiter) */
    uint32_t dropped; /* frames dropped: bad stuffing, length or check, too long */
} _z_serial_dec_t;

/* Starts a decoder writing payloads to out[0..cap). */
void _z_serial_dec_init(_z_serial_dec_t *d, uint8_t *out, size_t cap);
/* Takes one byte off the line. True when it ended a frame that checks: its
 * flags are d->flags, its payload d->out[0..d->len), valid until the next byte. */
bool _z_serial_dec_push(_z_serial_dec_t *d, uint8_t byte);

#endif
