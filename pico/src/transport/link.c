/*
 * Link framing: locator parsing, sending a batch (with the 2-byte length
 * prefix on streams, one frame on a serial line, one datagram otherwise), and
 * reading batches back from a byte stream without ever blocking longer than
 * asked.
 */
#include <string.h>

#include "../mem/text.h"
#include "transport.h"

static const char *_z_parse_u8(const char *s, uint8_t *out) {
    unsigned v = 0, n = 0;
    while (*s >= '0' && *s <= '9' && n < 4) {
        v = v * 10u + (unsigned)(*s++ - '0');
        n++;
    }
    if (n == 0 || n > 3 || v > 255) return NULL;
    *out = (uint8_t)v;
    return s;
}

/* Only multicast groups (of a peer or of scouting) have an interface. */
#define _Z_LOCATOR_IFACE (Z_FEATURE_MULTICAST_TRANSPORT || Z_FEATURE_SCOUTING)

#if _Z_LOCATOR_IFACE || Z_FEATURE_LINK_SERIAL
/* The value of `key` ("iface=") in the "#k=v;k=v" part of a locator, copied
 * to out[cap] (NUL-terminated; "" when absent). False when it does not fit. */
static bool _z_locator_param(const char *hash, const char *key, char *out, size_t cap) {
    out[0] = '\0';
    if (hash == NULL) return true;
    const char *v = hash + 1;
    while (*v != '\0' && !_z_prefix(v, key)) v++;
    if (*v == '\0') return true;
    v += _z_strlen(key);
    size_t k = 0;
    while (v[k] != '\0' && v[k] != ';') {
        if (k + 1 >= cap) return false;
        out[k] = v[k];
        k++;
    }
    out[k] = '\0';
    return true;
}
#endif

#if Z_FEATURE_LINK_SERIAL == 1
/* "serial/<device>#baudrate=N" (the device ends at '#' or '?'; the baud rate is required). */
static z_result_t _z_serial_endpoint_parse(_z_endpoint_t *ep, const char *s) {
    size_t n = 0;
    while (s[n] != '\0' && s[n] != '#' && s[n] != '?') n++;
    if (n == 0 || n >= sizeof(ep->dev)) return Z_ECONFIG;
    memcpy(ep->dev, s, n);
    ep->dev[n] = '\0';
    char rate[12];
    if (!_z_locator_param(_z_strchr(s, '#'), "baudrate=", rate, sizeof(rate)) || rate[0] == '\0') return Z_ECONFIG;
    uint32_t v = 0;
    for (const char *c = rate; *c != '\0'; c++) {
        if (*c < '0' || *c > '9' || v > 100000000u) return Z_ECONFIG;
        v = v * 10u + (uint32_t)(*c - '0');
    }
    if (v == 0) return Z_ECONFIG;
    ep->baudrate = v;
    ep->kind = _Z_LINK_SERIAL;
    return Z_OK;
}
#endif

z_result_t _z_endpoint_parse(_z_endpoint_t *ep, const char *loc) {
    memset(ep, 0, sizeof(*ep));
    if (loc == NULL) return Z_ECONFIG;
    if (_z_prefix(loc, "serial/")) {
#if Z_FEATURE_LINK_SERIAL == 1
        return _z_serial_endpoint_parse(ep, loc + 7);
#else
        return Z_EUNSUPPORTED;
#endif
    }
    if (_z_prefix(loc, "tcp/")) {
        ep->kind = _Z_LINK_TCP;
    } else if (_z_prefix(loc, "udp/")) {
        ep->kind = _Z_LINK_UDP;
    } else {
        return Z_ECONFIG;
    }
    const char *s = loc + 4;
    for (int i = 0; i < 4; i++) {
        s = _z_parse_u8(s, &ep->addr[i]);
        if (s == NULL || *s != (i < 3 ? '.' : ':')) return Z_ECONFIG;
        s++;
    }
    unsigned long port = 0;
    unsigned n = 0;
    while (*s >= '0' && *s <= '9' && n < 6) {
        port = port * 10u + (unsigned long)(*s++ - '0');
        n++;
    }
    if (n == 0 || port == 0 || port > 65535) return Z_ECONFIG;
    ep->port = (uint16_t)port;
    if (ep->kind == _Z_LINK_UDP && ep->addr[0] >= 224 && ep->addr[0] <= 239) ep->kind = _Z_LINK_UDP_MULTICAST;
    /* skip "?metadata"; read "#iface=NAME" */
    const char *hash = _z_strchr(s, '#');
    if (hash == NULL && *s != '\0' && *s != '?') return Z_ECONFIG;
#if _Z_LOCATOR_IFACE
    if (!_z_locator_param(hash, "iface=", ep->iface, sizeof(ep->iface))) ep->iface[sizeof(ep->iface) - 1] = '\0';
#endif
    if (ep->kind == _Z_LINK_TCP && !Z_FEATURE_LINK_TCP) return Z_EUNSUPPORTED;
    if (ep->kind == _Z_LINK_UDP && !Z_FEATURE_LINK_UDP_UNICAST) return Z_EUNSUPPORTED;
    if (ep->kind == _Z_LINK_UDP_MULTICAST && !Z_FEATURE_MULTICAST_TRANSPORT) return Z_EUNSUPPORTED;
    return Z_OK;
}

/* One write of `len` bytes as they are. */
static z_result_t _z_link_write(_z_transport_t *t, const uint8_t *buf, size_t len, bool droppable) {
#if Z_FEATURE_LINK_SERIAL == 1
    if (t->serial) return _z_serial_write(t, _Z_SERIAL_DATA, buf, len, droppable);
#endif
    return droppable ? _z_net_try_send(&t->sock, buf, len, ZP_CONGESTION_DROP_WAIT_MS) : _z_net_send(&t->sock, buf, len);
}

/* Sealed batches (see _z_link_send_sealed): on a stream the prefixes are the
 * framing, so everything goes in one write; a datagram carries one batch. */
static z_result_t _z_link_write_sealed(_z_transport_t *t, const uint8_t *buf, size_t len, bool droppable) {
    if (!_Z_DATAGRAM_LINKS || t->stream) return _z_link_write(t, buf, len, droppable);
    for (size_t at = 0; at + _Z_BATCH_PREFIX <= len;) {
        size_t n = (size_t)buf[at] | ((size_t)buf[at + 1] << 8);
        if (n > len - at - _Z_BATCH_PREFIX) return Z_EGENERIC; /* never: the batches were sealed here */
        _Z_TRY(_z_link_write(t, buf + at + _Z_BATCH_PREFIX, n, droppable));
        at += _Z_BATCH_PREFIX + n;
    }
    return Z_OK;
}

/* Every sender but the writer task: after the writer's batch, which is older. */
z_result_t _z_link_send_sealed(_z_transport_t *t, uint8_t *buf, size_t len, bool droppable) {
#if Z_FEATURE_AUTO_BATCHING == 1
    _Z_TRY(_z_transport_wait_writer(t));
#endif
    z_result_t res = _z_link_write_sealed(t, buf, len, droppable);
    if (res == Z_OK) t->last_tx_ms = _z_clock_ms();
    return res;
}

/* `batch` has _Z_BATCH_PREFIX bytes of room before it for its length. */
static z_result_t _z_link_send_one(_z_transport_t *t, uint8_t *batch, size_t len, bool droppable) {
    _z_batch_prefix(batch - _Z_BATCH_PREFIX, len);
    return _z_link_send_sealed(t, batch - _Z_BATCH_PREFIX, _Z_BATCH_PREFIX + len, droppable);
}

z_result_t _z_link_send_batch(_z_transport_t *t, uint8_t *batch, size_t len) {
    return _z_link_send_one(t, batch, len, false);
}

z_result_t _z_link_try_send_batch(_z_transport_t *t, uint8_t *batch, size_t len) {
    return _z_link_send_one(t, batch, len, true);
}

#if Z_FEATURE_AUTO_BATCHING == 1
static size_t _z_writer_len(const _z_transport_t *t) { return __atomic_load_n(&t->tx_out_len, __ATOMIC_SEQ_CST); }

/* Sends the writer's batch from the calling thread and frees the buffer. */
static z_result_t _z_writer_send(_z_transport_t *t, size_t len, uint32_t *dropped) {
    z_result_t res = _z_link_write_sealed(t, t->tx_out, len, t->tx_out_droppable);
    *dropped = 0;
    if (res == _Z_NET_BUSY) { /* its SNs are skipped: receivers accept gaps */
        *dropped = t->tx_out_msgs;
        res = Z_OK;
    }
    __atomic_store_n(&t->tx_out_len, (size_t)0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&t->tx_out_sending, false, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&t->tx_done_wanted, __ATOMIC_SEQ_CST)) _z_event_set(&t->tx_done);
    return res;
}

bool _z_transport_claim_batch(_z_transport_t *t) {
    bool idle = false;
    if (_z_writer_len(t) == 0 ||
        !__atomic_compare_exchange_n(&t->tx_out_sending, &idle, true, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return false;
    /* Another thread may have claimed, sent and freed the batch between the
     * two looks: a claim on an empty buffer is given back. */
    if (_z_writer_len(t) != 0) return true;
    __atomic_store_n(&t->tx_out_sending, false, __ATOMIC_SEQ_CST);
    return false;
}

z_result_t _z_transport_wait_writer(_z_transport_t *t) {
    for (;;) {
        if (_z_writer_len(t) == 0) return Z_OK;
        if (_z_transport_claim_batch(t)) { /* handed over, not yet claimed by the writer: send it here */
            uint32_t dropped;
            z_result_t res = _z_writer_send(t, _z_writer_len(t), &dropped);
            t->tx_dropped += dropped;
            if (res == Z_OK) t->last_tx_ms = _z_clock_ms();
            return res;
        }
        /* the writer sends it: a batch takes microseconds, so look for a while
         * before sleeping; it sets tx_done after freeing its buffer only when asked */
        _z_spin_t spin;
        _z_spin_start(&spin, _Z_WRITER_PATIENCE_US);
        while (_z_writer_len(t) != 0 && _z_spin_more(&spin)) {
        }
        if (_z_writer_len(t) == 0) continue;
        __atomic_store_n(&t->tx_done_wanted, true, __ATOMIC_SEQ_CST);
        if (_z_writer_len(t) != 0) (void)_z_event_wait(&t->tx_done, 10);
        __atomic_store_n(&t->tx_done_wanted, false, __ATOMIC_SEQ_CST);
    }
}

z_result_t _z_transport_write_batch(_z_transport_t *t, uint32_t *dropped) {
    size_t len = _z_writer_len(t);
    *dropped = 0;
    return len == 0 ? Z_OK : _z_writer_send(t, len, dropped);
}
#endif

/* Stream: accumulates the prefix, then the batch. */
static z_result_t _z_recv_stream(_z_transport_t *t, uint32_t timeout_ms, size_t *len) {
    size_t want = t->rx_need == 0 ? 2 : t->rx_need;
    int32_t n = _z_net_recv(&t->sock, t->rx + t->rx_have, want - t->rx_have, timeout_ms, NULL);
    if (n < 0) return Z_ETRANSPORT;
    t->rx_have += (size_t)n;
    if (t->rx_have < want) return Z_OK;
    t->rx_have = 0;
    if (t->rx_need == 0) {
        size_t blen = (size_t)t->rx[0] | ((size_t)t->rx[1] << 8);
        /* we advertised our buffer size: a larger batch is a protocol error */
        if (blen == 0 || blen + 2 > sizeof(t->rx)) return Z_EDESERIALIZE;
        t->rx_need = blen;
        return Z_OK;
    }
    *len = t->rx_need;
    t->rx_need = 0;
    return Z_OK;
}

z_result_t _z_transport_recv(_z_transport_t *t, uint32_t timeout_ms, size_t *len, uint8_t src[6]) {
    *len = 0;
    if (!t->open) return Z_ETRANSPORT;
    if (!_Z_DATAGRAM_LINKS || t->stream) return _z_recv_stream(t, timeout_ms, len);
#if Z_FEATURE_LINK_SERIAL == 1
    if (t->serial) return _z_serial_recv(t, timeout_ms, len);
#endif
    int32_t n = _z_net_recv(&t->sock, t->rx, sizeof(t->rx), timeout_ms, src);
    if (n < 0) return Z_ETRANSPORT;
    *len = (size_t)n;
    return Z_OK;
}

z_result_t _z_transport_process(_z_transport_t *t, size_t len, const uint8_t src[6]) {
    if (len == 0) return Z_OK;
    t->last_rx_ms = _z_clock_ms();
#if Z_FEATURE_MULTICAST_TRANSPORT == 1
    if (t->multicast) {
        z_result_t res = _z_rx_batch(t, t->rx, len, _z_mcast_peer(t, src), src);
        return res == Z_EDESERIALIZE ? Z_OK : res; /* a bad datagram never kills the group */
    }
#endif
    return _z_rx_batch(t, t->rx, len, -1, src);
}
