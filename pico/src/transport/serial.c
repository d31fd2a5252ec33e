/*
 * Serial link framing: the check value, the stuffing encoder and the
 * byte-by-byte decoder (see serial.h for the frame layout).
 */
#include "serial.h"

#include "../codec/rw.h"

#define _Z_SERIAL_FEEDBACK 0x04C11DB7u
#define _Z_COBS_FULL 254u /* data bytes of a block whose code is 0xFF */

/* Bit by bit: 8 shifts a byte cost less flash than a 1 KiB table, and a UART
 * is far slower than the loop. */
static uint32_t _z_crc_step(uint32_t reg, uint8_t byte) {
    reg ^= byte;
    for (int i = 0; i < 8; i++) reg = (reg & 1u) != 0 ? (reg >> 1) ^ _Z_SERIAL_FEEDBACK : reg >> 1;
    return reg;
}

uint32_t _z_serial_crc(const uint8_t *p, size_t len) {
    uint32_t reg = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) reg = _z_crc_step(reg, p[i]);
    return ~reg;
}

/* ---- encoder ---- */

/* The unstuffed frame, read in place: header, payload, check. */
typedef struct {
    uint8_t head[3];
    uint8_t tail[4];
    const uint8_t *payload;
    size_t len;
} _z_frame_src_t;

static uint8_t _z_frame_at(const _z_frame_src_t *f, size_t i) {
    if (i < 3) return f->head[i];
    i -= 3;
    return i < f->len ? f->payload[i] : f->tail[i - f->len];
}

/* Stuffed bytes gathered before they go to the sink. */
typedef struct {
    uint8_t buf[32];
    size_t n;
    _z_serial_sink_t sink;
    void *ctx;
} _z_frame_out_t;

static z_result_t _z_out_flush(_z_frame_out_t *o) {
    z_result_t res = o->n == 0 ? Z_OK : o->sink(o->ctx, o->buf, o->n);
    o->n = 0;
    return res;
}

static z_result_t _z_out_byte(_z_frame_out_t *o, uint8_t b) {
    if (o->n == sizeof(o->buf)) _Z_TRY(_z_out_flush(o));
    o->buf[o->n++] = b;
    return Z_OK;
}

z_result_t _z_serial_encode(uint8_t flags, const uint8_t *payload, size_t len, _z_serial_sink_t sink, void *ctx) {
    if (len > _Z_SERIAL_MTU) return Z_ENOSPACE;
    _z_frame_src_t f;
    uint32_t check = _z_serial_crc(payload, len);
    f.head[0] = flags;
    f.head[1] = (uint8_t)(len & 0xffu);
    f.head[2] = (uint8_t)(len >> 8);
    for (int i = 0; i < 4; i++) f.tail[i] = (uint8_t)(check >> (8 * i));
    f.payload = payload;
    f.len = len;
    size_t n = len + _Z_SERIAL_OVERHEAD;

    _z_frame_out_t o;
    o.n = 0;
    o.sink = sink;
    o.ctx = ctx;
    size_t i = 0;
    for (;;) {
        /* a block: the non-zero bytes up to the next zero, at most 254 of them */
        size_t j = i;
        while (j < n && j - i < _Z_COBS_FULL && _z_frame_at(&f, j) != 0) j++;
        _Z_TRY(_z_out_byte(&o, (uint8_t)(j - i + 1u)));
        for (size_t k = i; k < j; k++) _Z_TRY(_z_out_byte(&o, _z_frame_at(&f, k)));
        if (j - i == _Z_COBS_FULL) {
            i = j; /* a full block implies no zero: the next block starts here (01 when the data ends) */
        } else if (j == n) {
            break;
        } else {
            i = j + 1; /* the zero is implied by the block's code */
        }
    }
    _Z_TRY(_z_out_byte(&o, 0x00));
    return _z_out_flush(&o);
}

/* ---- decoder ---- */

static void _z_dec_restart(_z_serial_dec_t *d) {
    d->got = 0;
    d->wire = 0;
    d->crc = 0xFFFFFFFFu;
    d->check = 0;
    d->len = 0;
    d->flags = 0;
    d->left = 0;
    d->zero = false;
    d->bad = false;
}

void _z_serial_dec_init(_z_serial_dec_t *d, uint8_t *out, size_t cap) {
    d->out = out;
    d->cap = cap;
    d->dropped = 0;
    _z_dec_restart(d);
}

/* One unstuffed byte of the frame under way. */
static void _z_dec_byte(_z_serial_dec_t *d, uint8_t b) {
    size_t at = d->got++;
    if (at == 0) {
        d->flags = b;
    } else if (at == 1) {
        d->len = b;
    } else if (at == 2) {
        d->len = (uint16_t)(d->len | ((uint16_t)b << 8));
        if (d->len > _Z_SERIAL_MTU || d->len > d->cap) d->bad = true;
    } else if (at < 3u + d->len) {
        d->out[at - 3u] = b;
        d->crc = _z_crc_step(d->crc, b);
    } else if (at < 3u + d->len + 4u) {
        d->check |= (uint32_t)b << (8u * (at - 3u - d->len));
    } else {
        d->bad = true; /* longer than its length field says */
    }
}

bool _z_serial_dec_push(_z_serial_dec_t *d, uint8_t byte) {
    if (byte == 0x00) { /* delimiter: the frame under way ends */
        bool empty = d->wire == 0;
        bool ok = !d->bad && d->left == 0 && d->got == 3u + d->len + 4u && ~d->crc == d->check;
        if (!ok && !empty) d->dropped++;
        uint8_t flags = d->flags;
        uint16_t len = d->len;
        _z_dec_restart(d);
        if (!ok) return false;
        d->flags = flags; /* kept for the caller until the next byte */
        d->len = len;
        return true;
    }
    if (d->got == 0 && d->wire == 0) {
        d->flags = 0;
        d->len = 0;
    }
    if (++d->wire > _Z_SERIAL_MAX_WIRE) d->bad = true;
    if (d->bad) return false;
    if (d->left == 0) { /* a code byte */
        if (d->zero) _z_dec_byte(d, 0x00);
        d->left = (uint8_t)(byte - 1u);
        d->zero = byte != 0xFF;
        return false;
    }
    d->left--;
    _z_dec_byte(d, byte);
    return false;
}
