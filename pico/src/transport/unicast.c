/*
 * Unicast transport: the InitSyn/InitAck/OpenSyn/OpenAck handshake (as the
 * initiator), lease and keep-alive, Close. Sequence-number helpers.
 */
#include <string.h>

#include "transport.h"

#if Z_BATCH_UNICAST_SIZE > 65535 || Z_BATCH_UNICAST_SIZE < 64
#error "Z_BATCH_UNICAST_SIZE must be in 64..65535"
#endif

#define _Z_UDP_MTU 65487u

uint32_t _z_sn_mask(uint8_t fsn) {
    switch (fsn & 0x03) {
        case 0: return 0x7fu;
        case 1: return 0x3fffu;
        case 2: return 0x0fffffffu;
        default: return 0xffffffffu;
    }
}

/* Accepts sn if it is ahead of *last by at most half the SN space. */
bool _z_sn_accept(uint32_t *last, uint32_t sn, uint32_t mask) {
    if ((sn & ~mask) != 0) return false;
    uint32_t gap = (sn - *last) & mask;
    if (gap == 0 || gap > (mask / 2u) + 1u) return false;
    *last = sn;
    return true;
}

void _z_sn_init(_z_transport_t *t, uint32_t tx_initial, uint32_t rx_initial) {
    for (unsigned i = 0; i < _Z_PRIO_CHANNELS; i++) {
        t->tx_sn_r[i] = tx_initial;
        t->tx_sn_be[i] = tx_initial;
        t->rx_sn[i].last_r = (rx_initial - 1u) & t->sn_mask;
        t->rx_sn[i].last_be = t->rx_sn[i].last_r;
    }
}

static void _z_transport_reset(_z_transport_t *t, const _z_endpoint_t *ep) {
    t->ep = *ep;
    t->stream = ep->kind == _Z_LINK_TCP;
    t->multicast = ep->kind == _Z_LINK_UDP_MULTICAST;
#if Z_FEATURE_LINK_SERIAL == 1
    t->serial = ep->kind == _Z_LINK_SERIAL;
#endif
    _z_tx_reset(t);
    t->qos = false;
    t->rx_have = 0;
    t->rx_need = 0;
    t->lease_ms = Z_TRANSPORT_LEASE;
#if Z_FEATURE_FRAGMENTATION == 1
    t->defrag.active = false;
    t->defrag.len = 0;
#endif
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    memset(t->peers, 0, sizeof(t->peers));
#endif
}

/*
 * The InitSyn and OpenSyn of the handshake are written here, field by field,
 * rather than by the transport encoder (and the Close, like a KeepAlive, as
 * its bytes): they are the only Init, Open and Close a client sends, so a
 * build without ZP_CODEC_ALL has no encoder for those messages at all.
 */
static void _z_syn_start(_z_transport_t *t, _zw_t *w, uint8_t header) {
    _zw_init(w, t->tx + _Z_BATCH_PREFIX, _Z_TX_CAPACITY - _Z_BATCH_PREFIX);
    _zw_u8(w, header);
}

static z_result_t _z_syn_send(_z_transport_t *t, const _zw_t *w) {
    _Z_TRY(w->err);
    return _z_link_send_batch(t, t->tx + _Z_BATCH_PREFIX, w->pos);
}

/* |Z|S|A| INIT | |version| |zid_len|x|x|wai| ~zid~ [|resolution| |batch size LE|] [QoS] */
static z_result_t _z_send_init_syn(_z_transport_t *t, uint16_t batch) {
    _zw_t w;
    bool size = batch != 65535; /* the default */
    _z_syn_start(t, &w, (uint8_t)(_Z_T_INIT | (size ? _Z_FLAG_2 : 0) | (Z_FEATURE_QOS == 1 ? _Z_FLAG_Z : 0)));
    _zw_u8(&w, Z_PROTO_VERSION_BYTE);
    _zw_u8(&w, (uint8_t)(((t->zid.len - 1) << 4) | t->whatami));
    _zw_bytes(&w, t->zid.id, t->zid.len);
    if (size) {
        _zw_u8(&w, 0x0a); /* resolution: the default (0b10 for SNs and for request ids) */
        _zw_u8(&w, (uint8_t)(batch & 0xffu));
        _zw_u8(&w, (uint8_t)(batch >> 8));
    }
#if Z_FEATURE_QOS == 1
    _zw_u8(&w, 0x01); /* the QoS extension (unit, the last one): offers the 8 priority channels */
#endif
    return _z_syn_send(t, &w);
}

/* |Z|T|A| OPEN | %lease% %initial sn% ~cookie <u8;z16>~ */
static z_result_t _z_send_open_syn(_z_transport_t *t, uint32_t isn, _z_view_t cookie) {
    _zw_t w;
    bool in_s = (Z_TRANSPORT_LEASE % 1000u) == 0; /* t->lease_ms, set by _z_transport_reset */
    _z_syn_start(t, &w, (uint8_t)(_Z_T_OPEN | (in_s ? _Z_FLAG_2 : 0)));
    _zw_zint(&w, in_s ? Z_TRANSPORT_LEASE / 1000u : Z_TRANSPORT_LEASE);
    _zw_zint(&w, isn);
    _zw_lbytes(&w, cookie.ptr, cookie.len);
    return _z_syn_send(t, &w);
}

/* Waits (bounded) for one whole batch and decodes its first message, which
 * must be the acknowledgement `id` (InitAck or OpenAck; Z_EOPEN otherwise). */
static z_result_t _z_recv_ack(_z_transport_t *t, _z_tmsg_t *m, uint8_t id, uint64_t deadline) {
    size_t len = 0;
    while (len == 0) {
        uint64_t now = _z_clock_ms();
        if (now >= deadline) return Z_ETIMEDOUT;
        _Z_TRY(_z_transport_recv(t, (uint32_t)(deadline - now), &len, NULL));
    }
    _zr_t r;
    _zr_init(&r, t->rx, len);
    _Z_TRY(_z_handshake_decode(&r, m));
    /* ack is the first member of both init and open (a common initial sequence) */
    return m->id == id && m->m.init.ack ? Z_OK : Z_EOPEN;
}

static z_result_t _z_handshake(_z_transport_t *t) {
    _z_tmsg_t m;
    uint64_t deadline = _z_clock_ms() + ZP_OPEN_TIMEOUT_MS;
    uint16_t ours = (uint16_t)Z_BATCH_UNICAST_SIZE;
    if (!t->stream && ours > _Z_UDP_MTU) ours = (uint16_t)_Z_UDP_MTU;
#if Z_FEATURE_LINK_SERIAL == 1
    if (t->serial && ours > _Z_SERIAL_MTU) ours = (uint16_t)_Z_SERIAL_MTU;
#endif

    _Z_TRY(_z_send_init_syn(t, ours));

    _Z_TRY(_z_recv_ack(t, &m, _Z_T_INIT, deadline));
    if ((m.m.init.resolution & 0x03) > 0x02 || ((m.m.init.resolution >> 2) & 0x03) > 0x02) return Z_EOPEN;
    t->sn_mask = _z_sn_mask(m.m.init.resolution);
    t->batch_size = m.m.init.batch_size < ours ? m.m.init.batch_size : ours;
    t->remote_zid = m.m.init.zid;
    t->remote_whatami = m.m.init.whatami;
    /* QoS holds when both sides sent it (QoS or QoSLink); we only offer it in full builds */
    t->qos = Z_FEATURE_QOS == 1 && (m.m.init.qos || m.m.init.has_qoslink);
    _z_view_t cookie = m.m.init.cookie; /* points into t->rx, untouched until OpenAck */

    uint32_t isn;
    _z_random_fill(&isn, sizeof(isn));
    isn &= t->sn_mask;
    _Z_TRY(_z_send_open_syn(t, isn, cookie));

    _Z_TRY(_z_recv_ack(t, &m, _Z_T_OPEN, deadline));
    if ((m.m.open.initial_sn & ~(uint64_t)t->sn_mask) != 0) return Z_EOPEN;
    t->remote_lease_ms = m.m.open.lease_in_s ? m.m.open.lease * 1000u : m.m.open.lease;
    if (t->remote_lease_ms == 0) t->remote_lease_ms = Z_TRANSPORT_LEASE;
    _z_sn_init(t, isn, (uint32_t)m.m.open.initial_sn);
    t->last_rx_ms = _z_clock_ms();
    return Z_OK;
}

z_result_t _z_transport_open(_z_transport_t *t, const _z_endpoint_t *ep) {
    _z_transport_reset(t, ep);
    _Z_TRY(_z_net_open(&t->sock, ep));
    t->open = true;
    t->last_tx_ms = _z_clock_ms();
    t->last_rx_ms = t->last_tx_ms;
    z_result_t res;
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    if (t->multicast)
        res = _z_mcast_open(t);
    else
#endif
    {
        res = Z_OK;
#if Z_FEATURE_LINK_SERIAL == 1
        if (t->serial) res = _z_serial_open(t);
#endif
        if (res == Z_OK) res = _z_handshake(t);
    }
    if (res != Z_OK) {
        _z_net_close(&t->sock);
        t->open = false;
    }
    return res;
}

void _z_transport_close(_z_transport_t *t, bool send_close) {
    if (!t->open) return;
#if Z_FEATURE_AUTO_BATCHING == 1
    (void)_z_transport_wait_writer(t); /* the writer may be sending on the socket */
#endif
    if (send_close) {
        uint8_t close[4] = {0, 0, _Z_T_CLOSE, 0}; /* room for the length, Close (link), reason 0 */
        (void)_z_transport_flush(t);
        (void)_z_link_send_batch(t, close + _Z_BATCH_PREFIX, 2);
    }
    _z_net_close(&t->sock);
    t->open = false;
}

z_result_t _z_transport_send_keepalive(_z_transport_t *t) {
    if (!t->open) return Z_ETRANSPORT;
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    if (t->multicast) return _z_mcast_send_join(t);
#endif
    if (t->tx_len > 0 || t->tx_base > 0) return _z_transport_flush(t);
    uint8_t ka[3] = {0, 0, _Z_T_KEEPALIVE};
    return _z_link_send_batch(t, ka + 2, 1);
}

z_result_t _z_transport_tick(_z_transport_t *t) {
    if (!t->open) return Z_ETRANSPORT;
    uint64_t now = _z_clock_ms();
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    if (t->multicast) {
        _z_mcast_expire(t, now);
        if (now - t->last_join_ms >= Z_JOIN_INTERVAL) return _z_mcast_send_join(t);
        return Z_OK;
    }
#endif
    if (now - t->last_rx_ms > t->remote_lease_ms) return Z_ETIMEDOUT;
    if (now - t->last_tx_ms >= t->lease_ms / 4u) return _z_transport_send_keepalive(t);
    return Z_OK;
}
