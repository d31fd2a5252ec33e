/*
 * Session lifecycle: allocation from the fixed session pool, opening the
 * link, losing it, reconnecting (client mode) and re-declaring, and the
 * read/tick steps that both run models use.
 */
#include "session.h"

#include <string.h>

#include "zenoh-pico/api/primitives.h"

_z_session_t _zp_sessions[ZP_MAX_SESSIONS];

#define _Z_RELINK_DELAY_MS 300u /* longer than a read wait: no fd reuse race */

_z_session_t *_z_session_alloc(void) {
    for (unsigned i = 0; i < ZP_MAX_SESSIONS; i++) {
        if (!_zp_sessions[i].used) {
            memset(&_zp_sessions[i], 0, sizeof(_zp_sessions[i]));
            _zp_sessions[i].used = true;
            return &_zp_sessions[i];
        }
    }
    return NULL;
}

void _z_session_free(_z_session_t *s) {
#if Z_FEATURE_AUTO_BATCHING == 1
    _z_event_drop(&s->tp.tx_wake);
    _z_event_drop(&s->tp.tx_done);
#endif
#if Z_FEATURE_MULTI_THREAD == 1
    _z_mutex_drop(&s->mtx);
#endif
    s->used = false;
}

void _z_session_lock(_z_session_t *s) {
#if Z_FEATURE_MULTI_THREAD == 1
    (void)_z_mutex_lock(&s->mtx);
#else
    (void)s;
#endif
}

void _z_session_unlock(_z_session_t *s) {
#if Z_FEATURE_MULTI_THREAD == 1
    (void)_z_mutex_unlock(&s->mtx);
#else
    (void)s;
#endif
}

z_result_t _z_kebuf_set(_z_kebuf_t *k, const char *str, size_t len) {
    if (len >= sizeof(k->s)) return Z_ENOSPACE;
    memcpy(k->s, str, len);
    k->s[len] = '\0';
    k->len = (uint16_t)len;
    return Z_OK;
}

void _z_wexpr_from_kebuf(_z_wexpr_t *w, const _z_kebuf_t *k) {
    w->scope = 0;
    w->sender_mapping = false;
    w->suffix = k->s;
    w->suffix_len = k->len;
}

uint8_t _z_qos_byte(z_priority_t prio, z_congestion_control_t cc, bool express) {
    return (uint8_t)(((unsigned)prio & 0x07u) | (cc == Z_CONGESTION_CONTROL_BLOCK ? 0x08u : 0u) | (express ? 0x10u : 0u));
}

uint32_t _z_session_new_id(_z_session_t *s) { return ++s->next_id; }

bool _z_has_anyke(const char *p, size_t len) {
    for (size_t i = 0; i + 6 <= len; i++)
        if (memcmp(p + i, "_anyke", 6) == 0) return true;
    return false;
}

void _z_enc_from(_z_enc_t *w, const _z_encoding_t *e) {
    w->id = e->_id;
    w->has_schema = e->_schema._s._len > 0;
    w->schema = e->_schema._s._start;
    w->schema_len = (uint8_t)(e->_schema._s._len > 255 ? 255 : e->_schema._s._len);
}

void _z_data_fill(_z_data_t *d, uint8_t kind, const _z_bytes_t *payload, const _z_encoding_t *enc,
                  const _z_bytes_t *att, const z_timestamp_t *ts) {
    d->id = kind;
    if (payload != NULL) {
        d->payload.ptr = payload->_s._start;
        d->payload.len = payload->_s._len;
    }
    if (enc != NULL && (enc->_id != 0 || enc->_schema._s._len > 0)) {
        d->has_enc = true;
        _z_enc_from(&d->enc, enc);
    }
    if (att != NULL && att->_s._start != NULL) {
        d->has_att = true;
        d->att.ptr = att->_s._start;
        d->att.len = att->_s._len;
    }
    if (ts != NULL && ts->valid) {
        d->ts.time = ts->time;
        memcpy(d->ts.id.id, ts->id.id, 16);
        d->ts.id.len = _z_zid_wire_len(ts->id.id);
        d->has_ts = d->ts.id.len > 0;
    }
}

z_result_t _z_session_open(_z_session_t *s, const _z_config_t *cfg) {
    const char *loc = cfg->_connect[0] != '\0' ? cfg->_connect : cfg->_listen;
    s->mode = cfg->_mode;
    if (cfg->_has_zid) {
        memcpy(s->tp.zid.id, cfg->_zid, 16);
    } else {
        _z_random_fill(s->tp.zid.id, 16);
        s->tp.zid.id[15] &= 0x7f; /* keep it below 2^127, never zero */
        s->tp.zid.id[0] |= 0x01;
    }
    s->tp.zid.len = _z_zid_wire_len(s->tp.zid.id);
    if (s->tp.zid.len == 0) return Z_ECONFIG;
#if Z_FEATURE_SCOUTING == 1
    char scouted[ZP_LOCATOR_CAPACITY];
    if (loc[0] == '\0' && s->mode == 0 && !cfg->_no_scouting) {
        const char *group = cfg->_scouting[0] != '\0' ? cfg->_scouting : Z_CONFIG_MULTICAST_LOCATOR_DEFAULT;
        uint32_t timeout = cfg->_scouting_timeout_ms != 0 ? cfg->_scouting_timeout_ms : 1000u;
        if (_z_scout_locator(group, timeout, &s->tp.zid, scouted, sizeof(scouted)) != Z_OK) return Z_EOPEN;
        loc = scouted;
    }
#endif
    _Z_TRY(_z_endpoint_parse(&s->ep, loc));
    if (s->mode == 0 && s->ep.kind == _Z_LINK_UDP_MULTICAST) return Z_ECONFIG; /* client: unicast only */
    if (s->mode == 1 && s->ep.kind != _Z_LINK_UDP_MULTICAST) return Z_ECONFIG; /* peer: multicast only */
    s->tp.whatami = s->mode == 0 ? _Z_WAI_CLIENT : _Z_WAI_PEER;
    s->tp.handler = _z_session_handle;
    s->tp.handler_ctx = s;
    _z_random_fill(&s->next_rid, sizeof(s->next_rid));
    s->next_rid &= 0xffffu; /* distinct request ids per member of a multicast group */
#if Z_FEATURE_MULTI_THREAD == 1
    _Z_TRY(_z_mutex_init(&s->mtx));
#endif
#if Z_FEATURE_AUTO_BATCHING == 1
    if (_z_event_init(&s->tp.tx_wake) != Z_OK) {
        _z_mutex_drop(&s->mtx);
        return Z_EGENERIC;
    }
    if (_z_event_init(&s->tp.tx_done) != Z_OK) {
        _z_event_drop(&s->tp.tx_wake);
        _z_mutex_drop(&s->mtx);
        return Z_EGENERIC;
    }
#endif
    z_result_t res = _z_transport_open(&s->tp, &s->ep);
    if (res != Z_OK) {
#if Z_FEATURE_AUTO_BATCHING == 1
        _z_event_drop(&s->tp.tx_wake);
        _z_event_drop(&s->tp.tx_done);
#endif
#if Z_FEATURE_MULTI_THREAD == 1
        _z_mutex_drop(&s->mtx);
#endif
        return res == Z_ECONFIG || res == Z_EUNSUPPORTED ? res : Z_EOPEN;
    }
    s->connected = true;
    s->link_gen++;
    return Z_OK;
}

/* True when the read task may be blocked in a receive on the link. */
static bool _z_reader_active(const _z_session_t *s) {
#if Z_FEATURE_MULTI_THREAD == 1
    return __atomic_load_n(&s->read_running, __ATOMIC_ACQUIRE);
#else
    (void)s;
    return false;
#endif
}

/*
 * Called with the lock held when the link failed, expired or was closed.
 * Only the reader closes a socket it may be receiving on: from another
 * thread the close is left to the read task (close_pending).
 */
static void _z_session_link_lost(_z_session_t *s, bool from_reader) {
    if (!s->connected) return;
    s->connected = false;
    s->link_gen++;
    s->next_reconnect_ms = _z_clock_ms() + _Z_RELINK_DELAY_MS;
    if (!from_reader && _z_reader_active(s)) {
        s->close_pending = true;
    } else {
        _z_transport_close(&s->tp, false);
    }
    _z_session_fail_pending(s);
}

/* Closes a socket left by _z_session_link_lost. Lock held. */
static void _z_session_finish_close(_z_session_t *s) {
    if (!s->close_pending) return;
    _z_transport_close(&s->tp, false);
    s->close_pending = false;
}

void _z_session_close(_z_session_t *s) {
    _z_session_lock(s);
    if (s->connected) _z_transport_close(&s->tp, true);
    _z_session_finish_close(s);
    s->connected = false;
    s->closed = true;
    s->link_gen++;
    _z_session_fail_pending(s);
    _z_session_unlock(s);
}

z_result_t _z_session_send(_z_session_t *s, const _z_nmsg_t *m, bool reliable, bool express) {
    z_result_t res;
    _z_session_lock(s);
    if (s->closed) {
        res = Z_ECLOSED;
    } else if (!s->connected) {
        res = Z_ETRANSPORT;
    } else {
        res = _z_transport_send(&s->tp, m, reliable, express);
        if (res == Z_ETRANSPORT) _z_session_link_lost(s, false);
    }
    _z_session_unlock(s);
    return res;
}

#if Z_FEATURE_AUTO_BATCHING == 1
bool _z_session_write_step(_z_session_t *s) {
    _z_transport_t *t = &s->tp;
    /* the next put hands its batch over; one handed over needs no lock */
    __atomic_store_n(&t->writer_ready, true, __ATOMIC_SEQ_CST);
    bool have = _z_transport_claim_batch(t);
    if (!have && __atomic_load_n(&t->tx_pending, __ATOMIC_SEQ_CST)) {
        _z_spin_t spin;
        _z_spin_start(&spin, _Z_WRITER_PATIENCE_US);
        while (!(have = _z_transport_claim_batch(t)) && _z_spin_more(&spin)) {
        }
    }
    if (!have && __atomic_load_n(&t->tx_pending, __ATOMIC_SEQ_CST)) { /* no put came: take it */
        _z_session_lock(s);
        have = _z_transport_take_batch(t);
        _z_session_unlock(s);
    }
    if (!have) return false;
    __atomic_store_n(&t->writer_ready, false, __ATOMIC_SEQ_CST);
    uint32_t dropped = 0;
    /* the link cannot be closed or replaced meanwhile: closing waits for this batch */
    z_result_t res = _z_transport_write_batch(t, &dropped);
    if (res != Z_OK || dropped != 0) { /* the lock only for news */
        _z_session_lock(s);
        s->tp.tx_dropped += dropped;
        if (res != Z_OK && s->connected) _z_session_link_lost(s, false);
        _z_session_unlock(s);
    }
    return true;
}

void _z_session_auto_batching(_z_session_t *s, bool on) {
    _z_session_lock(s);
    s->tp.auto_tx = on;
    if (!on && s->connected) { /* no writer any more: what it was handed, then what is built */
        z_result_t res = _z_transport_wait_writer(&s->tp);
        if (res == Z_OK) res = _z_transport_flush(&s->tp);
        if (res != Z_OK) _z_session_link_lost(s, false);
    }
    _z_session_unlock(s);
}
#endif

z_result_t _z_session_read_step(_z_session_t *s, uint32_t timeout_ms) {
    size_t len = 0;
    uint8_t src[6] = {0};
    _z_session_lock(s);
    bool closed = s->closed, connected = s->connected;
    uint32_t gen = s->link_gen;
    _z_session_finish_close(s);
    _z_session_unlock(s);
    if (closed) return Z_ECLOSED;
    if (!connected) {
        _z_sleep_ms(timeout_ms < 50u ? timeout_ms : 50u);
        return Z_ETRANSPORT;
    }
    /* only this reader touches the receive side: no lock while waiting */
    z_result_t res = _z_transport_recv(&s->tp, timeout_ms, &len, src);
    _z_session_lock(s);
    if (gen == s->link_gen && s->connected) {
        if (res == Z_OK && len > 0) res = _z_transport_process(&s->tp, len, src);
        if (res != Z_OK) _z_session_link_lost(s, true);
    }
    _z_session_unlock(s);
    return res;
}

#if Z_FEATURE_AUTO_RECONNECT == 1
/* Client mode: reopen the link and re-declare everything. The handshake
 * runs without the lock; nobody touches the transport while disconnected. */
static void _z_session_reconnect(_z_session_t *s) {
    _z_session_lock(s);
    if (!_z_reader_active(s)) _z_session_finish_close(s);
    bool due = !s->closed && !s->connected && !s->connecting && !s->close_pending &&
               _z_clock_ms() >= s->next_reconnect_ms;
    if (due) s->connecting = true;
    _z_session_unlock(s);
    if (!due) return;
    z_result_t res = _z_transport_open(&s->tp, &s->ep);
    _z_session_lock(s);
    s->connecting = false;
    if (res == Z_OK && s->closed) {
        _z_transport_close(&s->tp, true);
    } else if (res == Z_OK) {
        s->connected = true;
        s->link_gen++;
        _z_session_redeclare(s);
    } else {
        s->next_reconnect_ms = _z_clock_ms() + ZP_RECONNECT_PERIOD_MS;
    }
    _z_session_unlock(s);
}
#endif

z_result_t _z_session_tick(_z_session_t *s) {
    z_result_t res = Z_OK;
    _z_session_lock(s);
    if (s->connected) {
        res = _z_transport_tick(&s->tp);
        if (res != Z_OK) _z_session_link_lost(s, false);
    }
#if Z_FEATURE_QUERY == 1
    _z_session_expire_pending(s, _z_clock_ms());
#endif
    bool reconnect = !s->connected && !s->closed && s->mode == 0;
    _z_session_unlock(s);
#if Z_FEATURE_AUTO_RECONNECT == 1
    if (reconnect) _z_session_reconnect(s);
#else
    (void)reconnect;
#endif
    return res;
}
