/*
 * Reception: walks the transport messages of a batch, applies the
 * sequence-number rule to Frames and Fragments, reassembles fragmented
 * messages into the bounded buffer, and passes every accepted network
 * message to the handler. Malformed input makes the batch fail
 * (Z_EDESERIALIZE), which the session treats as a broken link.
 */
#include <string.h>

#include "transport.h"

#if Z_FEATURE_FRAGMENTATION == 1
static void _z_defrag(_z_transport_t *t, const _z_tmsg_t *m, const _z_rx_info_t *info) {
    _z_defrag_t *d = &t->defrag;
    uint32_t sn = (uint32_t)m->m.frame.sn;
    if (m->m.frame.drop) {
        d->active = false;
        return;
    }
    if (m->m.frame.first || !d->active) {
        d->active = true;
        d->len = 0;
        d->reliable = info->reliable;
        d->peer = info->peer;
        d->prio = info->prio;
        d->next_sn = sn;
    } else if (d->reliable != info->reliable || d->peer != info->peer || d->prio != info->prio) {
        return; /* one reassembly at a time: a second interleaved message is dropped */
    }
    if (sn != d->next_sn || m->m.frame.payload.len > sizeof(d->buf) - d->len) {
        d->active = false; /* gap, reorder or over the configured limit: discard */
        return;
    }
    if (m->m.frame.payload.len > 0) memcpy(d->buf + d->len, m->m.frame.payload.ptr, m->m.frame.payload.len);
    d->len += m->m.frame.payload.len;
    d->next_sn = (sn + 1u) & t->sn_mask;
    if (m->m.frame.more) return;
    d->active = false;
    _z_nmsg_t n;
    _zr_t r;
    _zr_init(&r, d->buf, d->len);
    /* an undecodable reassembled message is dropped silently */
    if (_z_network_decode(&r, &n) == Z_OK && _zr_left(&r) == 0) t->handler(t->handler_ctx, &n, info);
}
#endif

/* The SN state of the channel a Frame/Fragment belongs to, or NULL. */
static uint32_t *_z_rx_last(_z_transport_t *t, int8_t peer, uint8_t prio, bool reliable, uint32_t *mask) {
    _z_rx_sn_t *s = &t->rx_sn[_z_prio_channel(t, prio)];
    *mask = t->sn_mask;
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    if (t->multicast) {
        if (peer < 0) return NULL; /* not joined yet */
        s = &t->peers[peer].sn;
        *mask = t->peers[peer].sn_mask;
    }
#else
    (void)peer;
#endif
    return reliable ? &s->last_r : &s->last_be;
}

z_result_t _z_rx_batch(_z_transport_t *t, const uint8_t *b, size_t len, int8_t peer, const uint8_t *src) {
    _zr_t r;
    _zr_init(&r, b, len);
    (void)src;
    while (_zr_left(&r) > 0) {
        _z_tmsg_t m;
        if (_z_transport_decode(&r, &m) != Z_OK) return Z_EDESERIALIZE;
        switch (m.id) {
            case _Z_T_FRAME:
            case _Z_T_FRAGMENT: {
                uint32_t mask;
                uint8_t prio = m.m.frame.has_qos ? (uint8_t)(m.m.frame.qos & 0x07u) : _Z_PRIO_DEFAULT;
                uint32_t *last = _z_rx_last(t, peer, prio, m.m.frame.reliable, &mask);
                bool ok = last != NULL && _z_sn_accept(last, (uint32_t)m.m.frame.sn, mask);
                _z_rx_info_t info = {m.m.frame.reliable, peer, prio};
                if (m.id == _Z_T_FRAGMENT) {
#if Z_FEATURE_FRAGMENTATION == 1
                    if (ok) _z_defrag(t, &m, &info);
#endif
                    break;
                }
                while (_z_frame_more(&r)) {
                    _z_nmsg_t n;
                    if (_z_network_decode(&r, &n) != Z_OK) return Z_EDESERIALIZE;
                    if (ok) t->handler(t->handler_ctx, &n, &info);
                }
                break;
            }
            case _Z_T_CLOSE:
                if (!t->multicast) return Z_ECLOSED;
                break;
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
            case _Z_T_JOIN:
                if (t->multicast && src != NULL) {
                    _z_mcast_on_join(t, &m, src);
                    peer = _z_mcast_peer(t, src);
                }
                break;
#endif
            default: /* KeepAlive, OAM, late handshake messages */
                break;
        }
    }
    return Z_OK;
}
