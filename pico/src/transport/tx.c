/*
 * Transmission: network messages are appended to the batch being built,
 * inside a Frame of their channel (priority when QoS is on, and reliability;
 * one SN per Frame from that channel's counter). A batch is sent
 * when the next message does not fit, at once when batching is off or the
 * message is express, or on flush. A message larger than an empty batch is
 * cut into Fragments, each alone in its batch; the slices are re-encoded
 * through a window writer, so no second copy of the message is needed.
 * A batch of DROP messages only is dropped whole when the link has no room
 * (see _z_transport_send in transport.h). With automatic batching a batch is
 * sent by the writer task instead (see transport.h).
 */
#include <string.h>

#include "transport.h"

#define _Z_TX_OFF _Z_BATCH_PREFIX /* room for the batch's length prefix */

static size_t _z_tx_cap(const _z_transport_t *t) {
    size_t cap = t->stream ? (size_t)t->batch_size - 2u : (size_t)t->batch_size;
    return cap > _Z_TX_CAPACITY - _Z_TX_OFF ? _Z_TX_CAPACITY - _Z_TX_OFF : cap;
}

/* Writes the length prefix of the batch being built; returns the bytes of
 * tx to send (every sealed batch, prefixes included). */
static size_t _z_tx_seal(_z_transport_t *t) {
    if (t->tx_len == 0) return t->tx_base;
    _z_batch_prefix(t->tx + t->tx_base, t->tx_len);
    return t->tx_base + _Z_TX_OFF + t->tx_len;
}

void _z_tx_reset(_z_transport_t *t) {
    t->tx_base = 0;
    t->tx_len = 0;
    t->tx_frame = -1;
    t->tx_block = false;
    t->tx_msgs = 0;
}

static uint32_t *_z_tx_sn(_z_transport_t *t, unsigned ch, bool reliable) {
    return reliable ? &t->tx_sn_r[ch] : &t->tx_sn_be[ch];
}

/* The priority a network message travels at (its QoS extension, else Data). */
static uint8_t _z_msg_prio(const _z_nmsg_t *m) { return m->ext.has_qos ? (uint8_t)(m->ext.qos & 0x07u) : _Z_PRIO_DEFAULT; }

/* The Frame/Fragment header of a channel: the QoS extension only for a
 * priority other than the default, and only when QoS was negotiated. */
static void _z_tx_header(_z_tmsg_t *f, uint8_t id, bool reliable, uint32_t sn, const _z_transport_t *t, uint8_t prio) {
    memset(f, 0, sizeof(*f));
    f->id = id;
    f->m.frame.reliable = reliable;
    f->m.frame.sn = sn;
#if Z_FEATURE_QOS == 1
    f->m.frame.has_qos = t->qos && prio != _Z_PRIO_DEFAULT;
    f->m.frame.qos = prio;
#else
    (void)t;
    (void)prio;
#endif
}

/* Congestion control DROP applies to data messages without the D (block) bit. */
static bool _z_droppable(const _z_nmsg_t *m) {
    bool data = m->id == _Z_N_PUSH || m->id == _Z_N_REQUEST || m->id == _Z_N_RESPONSE;
    return data && ((m->ext.has_qos ? m->ext.qos : 0x05u) & 0x08u) == 0;
}

z_result_t _z_transport_flush(_z_transport_t *t) {
    size_t len = _z_tx_seal(t);
    if (len == 0) return Z_OK;
    bool droppable = !t->tx_block;
    uint32_t msgs = t->tx_msgs;
    _z_tx_reset(t);
#if Z_FEATURE_AUTO_BATCHING == 1
    __atomic_store_n(&t->tx_pending, false, __ATOMIC_SEQ_CST); /* nothing left for the writer to fetch */
#endif
    z_result_t res = _z_link_send_sealed(t, t->tx, len, droppable);
    if (res == _Z_NET_BUSY) {
        t->tx_dropped += msgs; /* the SNs of its frames are skipped: receivers accept gaps */
        return Z_OK;
    }
    return res;
}

/* Appends [Frame header if needed][message] to the batch; Z_ENOSPACE if it
 * does not fit (the batch is then left unchanged). */
static z_result_t _z_tx_append(_z_transport_t *t, const _z_nmsg_t *m, bool reliable) {
    _zw_t w;
    uint8_t prio = _z_msg_prio(m);
    unsigned ch = _z_prio_channel(t, prio);
    int8_t frame = (int8_t)((ch << 1) | (reliable ? 1u : 0u));
    uint32_t *sn = _z_tx_sn(t, ch, reliable);
    uint32_t sn_before = *sn;
    int8_t frame_before = t->tx_frame;
    _zw_init(&w, t->tx + t->tx_base + _Z_TX_OFF, _z_tx_cap(t));
    w.pos = t->tx_len;
    w.skip = 0;
    w.cap = _z_tx_cap(t);
    z_result_t res = Z_OK;
    if (t->tx_frame != frame) {
        _z_tmsg_t f;
        _z_tx_header(&f, _Z_T_FRAME, reliable, *sn, t, prio);
        res = _z_transport_encode(&w, &f);
        if (res == Z_OK) {
            *sn = (*sn + 1u) & t->sn_mask;
            t->tx_frame = frame;
        }
    }
    if (res == Z_OK) res = _z_network_encode(&w, m);
    if (res != Z_OK) {
        *sn = sn_before;
        t->tx_frame = frame_before;
        return res;
    }
    t->tx_len = w.pos;
    t->tx_msgs++;
    if (!_z_droppable(m)) t->tx_block = true;
    return Z_OK;
}

#if Z_FEATURE_FRAGMENTATION == 1
static z_result_t _z_tx_fragmented(_z_transport_t *t, const _z_nmsg_t *m, bool reliable) {
    _zw_t w;
    _zw_counter(&w);
    _Z_TRY(_z_network_encode(&w, m));
    size_t total = w.pos, offset = 0, cap = _z_tx_cap(t);
    uint8_t *batch = t->tx + _Z_TX_OFF;
    uint8_t prio = _z_msg_prio(m);
    uint32_t *sn = _z_tx_sn(t, _z_prio_channel(t, prio), reliable);
    _Z_TRY(_z_transport_flush(t));
    while (offset < total) {
        _z_tmsg_t f;
        _z_tx_header(&f, _Z_T_FRAGMENT, reliable, *sn, t, prio);
        f.m.frame.more = true;
        f.m.frame.first = offset == 0;
        _zw_init(&w, batch, cap);
        _Z_TRY(_z_transport_encode(&w, &f));
        size_t hdr = w.pos;
        if (hdr >= cap) return Z_ENOSPACE;
        size_t chunk = total - offset < cap - hdr ? total - offset : cap - hdr;
        if (offset + chunk == total) batch[0] &= (uint8_t)~_Z_FLAG_2; /* last fragment */
        _zw_init(&w, batch + hdr, chunk);
        w.skip = offset;
        z_result_t res = _z_network_encode(&w, m);
        if (res != Z_OK && res != Z_ENOSPACE) return res;
        *sn = (*sn + 1u) & t->sn_mask;
        if (offset == 0 && _z_droppable(m)) { /* the first fragment decides for the message */
            res = _z_link_try_send_batch(t, batch, hdr + chunk);
            if (res == _Z_NET_BUSY) {
                t->tx_dropped++;
                return Z_OK;
            }
            _Z_TRY(res);
        } else {
            _Z_TRY(_z_link_send_batch(t, batch, hdr + chunk));
        }
        offset += chunk;
    }
    return Z_OK;
}
#endif

#if Z_FEATURE_AUTO_BATCHING == 1
/* While the writer is busy, a batch being built is handed over as soon as it
 * is 1/_Z_FILL_DIV full (or the writer asks for it): fewer, fuller batches
 * than handing over every message, and the writer never waits for a full one. */
#ifndef _Z_FILL_DIV
#define _Z_FILL_DIV 4u
#endif
static bool _z_tx_auto(const _z_transport_t *t) { return t->auto_tx && !t->batching; }

/* Wakes the writer if it waits, or is about to: it announces writer_idle
 * before its last look at tx_out_len and tx_pending (all sequentially
 * consistent, so one of the two sides sees the other). */
static void _z_tx_wake_writer(_z_transport_t *t) {
    if (__atomic_load_n(&t->writer_idle, __ATOMIC_SEQ_CST)) _z_event_set(&t->tx_wake);
}

/* Moves the batch being built to the writer's buffer (once the writer has sent
 * the previous one) and wakes the writer. */
static z_result_t _z_tx_hand_over(_z_transport_t *t) {
    _Z_TRY(_z_transport_wait_writer(t));
    size_t len = _z_tx_seal(t);
    memcpy(t->tx_out, t->tx, len);
    t->tx_out_droppable = !t->tx_block;
    t->tx_out_msgs = t->tx_msgs;
    _z_tx_reset(t);
    t->last_tx_ms = _z_clock_ms(); /* the writer sends it without the lock, so it is counted now */
    __atomic_store_n(&t->tx_pending, false, __ATOMIC_SEQ_CST);
    __atomic_store_n(&t->tx_out_len, len, __ATOMIC_SEQ_CST);
    _z_tx_wake_writer(t);
    return Z_OK;
}

/* After a message was appended: the batch goes to the writer's buffer when
 * that is free and the writer asks for it (it has nothing to send) or the
 * batch is 1/_Z_FILL_DIV full; otherwise it keeps filling, and the writer
 * comes for it (tx_pending). */
static z_result_t _z_tx_auto_queued(_z_transport_t *t) {
    if (__atomic_load_n(&t->tx_out_len, __ATOMIC_SEQ_CST) == 0 &&
        (__atomic_load_n(&t->writer_ready, __ATOMIC_SEQ_CST) || (t->tx_base + t->tx_len) * _Z_FILL_DIV >= t->batch_size))
        return _z_tx_hand_over(t);
    /* Already announced by an earlier put: only a hand-over or a flush (lock
     * held, as here) clears it, and the writer does not sleep while it is set. Not
     * storing it again keeps this line out of the writer's cache. */
    if (__atomic_load_n(&t->tx_pending, __ATOMIC_RELAXED)) return Z_OK;
    __atomic_store_n(&t->tx_pending, true, __ATOMIC_SEQ_CST);
    _z_tx_wake_writer(t);
    return Z_OK;
}

/* The batch being built is full while the writer sends: on a stream link,
 * seal it and start the next one behind it in tx when there is room for a
 * whole batch, so that the writer later takes them in one write. */
static bool _z_tx_next_batch(_z_transport_t *t) {
    if (!t->stream || __atomic_load_n(&t->tx_out_len, __ATOMIC_SEQ_CST) == 0) return false;
    size_t next = _z_tx_seal(t);
    if (next + _Z_TX_OFF + _z_tx_cap(t) > sizeof(t->tx)) return false;
    t->tx_base = next;
    t->tx_len = 0;
    t->tx_frame = -1;
    return true;
}

bool _z_transport_take_batch(_z_transport_t *t) {
    if (__atomic_load_n(&t->tx_out_len, __ATOMIC_SEQ_CST) == 0) {
        if (!t->open || (t->tx_len == 0 && t->tx_base == 0) || !_z_tx_auto(t)) return false;
        if (_z_tx_hand_over(t) != Z_OK) return false;
    }
    return _z_transport_claim_batch(t);
}
#endif

z_result_t _z_transport_send(_z_transport_t *t, const _z_nmsg_t *m, bool reliable, bool express) {
    if (!t->open) return Z_ETRANSPORT;
    z_result_t res = _z_tx_append(t, m, reliable);
    if (res == Z_ENOSPACE && t->tx_len > 0) {
#if Z_FEATURE_AUTO_BATCHING == 1
        if (_z_tx_auto(t) && !express) {
            if (!_z_tx_next_batch(t)) _Z_TRY(_z_tx_hand_over(t));
        } else
#endif
        {
            _Z_TRY(_z_transport_flush(t));
        }
        res = _z_tx_append(t, m, reliable);
    }
#if Z_FEATURE_FRAGMENTATION == 1
    if (res == Z_ENOSPACE) return _z_tx_fragmented(t, m, reliable);
#endif
    if (res != Z_OK) return res;
    if (express) return _z_transport_flush(t);
#if Z_FEATURE_AUTO_BATCHING == 1
    if (_z_tx_auto(t)) return _z_tx_auto_queued(t);
#endif
    if (!t->batching) return _z_transport_flush(t);
    return Z_OK;
}
