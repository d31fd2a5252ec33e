/*
 * Multicast transport (peer mode): no handshake. Every member multicasts a
 * Join (zid, batch size, lease, next SNs) every Z_JOIN_INTERVAL ms; a member
 * is known from its first Join, identified by its source address, and
 * forgotten when its lease expires. Frames from unknown senders are ignored.
 */
#include <string.h>

#include "transport.h"

#if Z_FEATURE_MULTICAST_TRANSPORT == 1

z_result_t _z_mcast_open(_z_transport_t *t) {
    uint32_t isn;
    t->batch_size = Z_BATCH_MULTICAST_SIZE;
    t->sn_mask = _z_sn_mask(0x02);
    _z_random_fill(&isn, sizeof(isn));
    isn &= t->sn_mask;
    _z_sn_init(t, isn, isn); /* peers' SNs come from their Joins */
    t->remote_lease_ms = Z_TRANSPORT_LEASE;
    return _z_mcast_send_join(t);
}

z_result_t _z_mcast_send_join(_z_transport_t *t) {
    _z_tmsg_t m;
    _zw_t w;
    _Z_TRY(_z_transport_flush(t));
    memset(&m, 0, sizeof(m));
    m.id = _Z_T_JOIN;
    m.m.join.whatami = t->whatami;
    m.m.join.zid = t->zid;
    m.m.join.resolution = 0x0a;
    m.m.join.batch_size = (uint16_t)t->batch_size;
    m.m.join.has_size = t->batch_size != 8192;
    m.m.join.lease_in_s = (t->lease_ms % 1000u) == 0;
    m.m.join.lease = m.m.join.lease_in_s ? t->lease_ms / 1000u : t->lease_ms;
    m.m.join.next_sn_r = t->tx_sn_r[0];
    m.m.join.next_sn_be = t->tx_sn_be[0];
    _zw_init(&w, t->tx + 2, _Z_TX_CAPACITY - 2);
    _Z_TRY(_z_transport_encode(&w, &m));
    t->last_join_ms = _z_clock_ms();
    return _z_link_send_batch(t, t->tx + 2, w.pos);
}

int8_t _z_mcast_peer(_z_transport_t *t, const uint8_t src[6]) {
    for (int8_t i = 0; i < ZP_MAX_PEERS; i++) {
        if (t->peers[i].used && memcmp(t->peers[i].addr, src, 6) == 0) {
            t->peers[i].last_rx_ms = _z_clock_ms();
            return i;
        }
    }
    return -1;
}

void _z_mcast_on_join(_z_transport_t *t, const _z_tmsg_t *m, const uint8_t src[6]) {
    if (m->m.join.zid.len == t->zid.len && memcmp(m->m.join.zid.id, t->zid.id, t->zid.len) == 0) return;
    int8_t free_slot = -1;
    for (int8_t i = 0; i < ZP_MAX_PEERS; i++) {
        _z_mpeer_t *p = &t->peers[i];
        if (p->used && memcmp(p->addr, src, 6) == 0) {
            p->last_rx_ms = _z_clock_ms();
            return;
        }
        if (!p->used && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0) return; /* table full: this member stays unknown */
    _z_mpeer_t *p = &t->peers[free_slot];
    p->used = true;
    memcpy(p->addr, src, 6);
    p->zid = m->m.join.zid;
    p->whatami = m->m.join.whatami;
    p->sn_mask = _z_sn_mask(m->m.join.resolution);
    p->sn.last_r = ((uint32_t)m->m.join.next_sn_r - 1u) & p->sn_mask;
    p->sn.last_be = ((uint32_t)m->m.join.next_sn_be - 1u) & p->sn_mask;
    p->lease_ms = m->m.join.lease_in_s ? m->m.join.lease * 1000u : m->m.join.lease;
    p->last_rx_ms = _z_clock_ms();
    /* introduce ourselves to the newcomer at the next tick instead of up to
     * a join interval later: until then it ignores our frames */
    t->last_join_ms = p->last_rx_ms - Z_JOIN_INTERVAL;
}

void _z_mcast_expire(_z_transport_t *t, uint64_t now) {
    for (int i = 0; i < ZP_MAX_PEERS; i++) {
        _z_mpeer_t *p = &t->peers[i];
        if (p->used && now - p->last_rx_ms > p->lease_ms) p->used = false;
    }
}

#endif
