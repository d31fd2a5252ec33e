/*
 * Serial link: batches in frames (serial.h) over the platform's UART, and
 * the exchange that opens the line before the transport's handshake, as the
 * connecting side (docs/protocol-notes.md "Serial link"):
 *
 *   we send I; the listener answers I+A, and data frames then go both ways;
 *   an R means the listener still had a session open: send I again 250 ms
 *   later; no answer within a second (the listener may have emptied its
 *   buffers after our I): send I again.
 *
 * During the session an I means the other side started again: it is
 * answered R and the link ends, as does an R.
 */
#include "transport.h"

#if Z_FEATURE_LINK_SERIAL == 1

#define _Z_SERIAL_INIT_RETRY_MS 1000u
#define _Z_SERIAL_RESET_WAIT_MS 250u

typedef struct {
    _z_transport_t *t;
    bool droppable; /* the first piece may be refused (congestion control DROP) */
} _z_serial_out_t;

static z_result_t _z_serial_sink(void *ctx, const uint8_t *p, size_t len) {
    _z_serial_out_t *o = (_z_serial_out_t *)ctx;
    if (o->droppable) {
        o->droppable = false;
        return _z_net_try_send(&o->t->sock, p, len, ZP_CONGESTION_DROP_WAIT_MS);
    }
    return _z_net_send(&o->t->sock, p, len);
}

z_result_t _z_serial_write(_z_transport_t *t, uint8_t flags, const uint8_t *payload, size_t len, bool droppable) {
    _z_serial_out_t o = {t, droppable};
    return _z_serial_encode(flags, payload, len, _z_serial_sink, &o);
}

/* Unstuffs what was read and, when that is used up, reads once more (waiting
 * at most timeout_ms). *frame: a whole frame is in t->sdec. */
static z_result_t _z_serial_take(_z_transport_t *t, uint32_t timeout_ms, bool *frame) {
    *frame = false;
    if (t->sin_at == t->sin_len) {
        int32_t n = _z_net_recv(&t->sock, t->sin, sizeof(t->sin), timeout_ms, NULL);
        if (n < 0) return Z_ETRANSPORT;
        t->sin_at = 0;
        t->sin_len = (uint8_t)n;
    }
    while (t->sin_at < t->sin_len) {
        if (_z_serial_dec_push(&t->sdec, t->sin[t->sin_at++])) {
            *frame = true;
            break;
        }
    }
    return Z_OK;
}

z_result_t _z_serial_open(_z_transport_t *t) {
    _z_serial_dec_init(&t->sdec, t->rx, sizeof(t->rx));
    t->sin_at = 0;
    t->sin_len = 0;
    uint64_t deadline = _z_clock_ms() + ZP_OPEN_TIMEOUT_MS;
    uint64_t next_init = 0;
    for (;;) {
        uint64_t now = _z_clock_ms();
        if (now >= deadline) return Z_ETIMEDOUT;
        if (now >= next_init) {
            _Z_TRY(_z_serial_write(t, _Z_SERIAL_FLAG_INIT, NULL, 0, false));
            next_init = now + _Z_SERIAL_INIT_RETRY_MS;
        }
        uint64_t until = next_init < deadline ? next_init : deadline;
        bool frame;
        _Z_TRY(_z_serial_take(t, (uint32_t)(until - now), &frame));
        if (!frame) continue;
        uint8_t flags = t->sdec.flags;
        if ((flags & (_Z_SERIAL_FLAG_INIT | _Z_SERIAL_FLAG_ACK)) == (_Z_SERIAL_FLAG_INIT | _Z_SERIAL_FLAG_ACK))
            return Z_OK;
        if ((flags & _Z_SERIAL_FLAG_RESET) != 0) next_init = _z_clock_ms() + _Z_SERIAL_RESET_WAIT_MS;
        /* anything else is left over from an earlier session */
    }
}

z_result_t _z_serial_recv(_z_transport_t *t, uint32_t timeout_ms, size_t *len) {
    bool frame;
    _Z_TRY(_z_serial_take(t, timeout_ms, &frame));
    if (!frame) return Z_OK;
    uint8_t flags = t->sdec.flags;
    if ((flags & _Z_SERIAL_FLAG_RESET) != 0) return Z_ETRANSPORT;
    if ((flags & _Z_SERIAL_FLAG_INIT) != 0) {
        if ((flags & _Z_SERIAL_FLAG_ACK) != 0) return Z_OK; /* a repeated answer to our I */
        (void)_z_serial_write(t, _Z_SERIAL_FLAG_RESET, NULL, 0, false);
        return Z_ETRANSPORT;
    }
    *len = t->sdec.len;
    return Z_OK;
}

#endif
