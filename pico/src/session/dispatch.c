/*
 * Dispatch of received network messages to the session's entities:
 * Push -> subscribers, Request -> queryables (then always ResponseFinal),
 * Response/ResponseFinal -> pending gets, Declare(Token/Final) -> liveliness
 * subscribers and liveliness gets. Samples handed to callbacks are views on
 * the receive buffer, valid during the callback only.
 */
#include <string.h>

#include "../keyexpr/keyexpr.h"
#include "session.h"

static inline void _z_slice_view(_z_slice_t *s, const uint8_t *p, size_t len) {
    s->_start = p;
    s->_len = len;
    s->_deleter = NULL;
    s->_context = NULL;
}

/* A view in a structure cleared before (its deleter and context are NULL already). */
static inline void _z_zeroed_view(_z_slice_t *s, const uint8_t *p, size_t len) {
    s->_start = p;
    s->_len = len;
}

/* Only full keys can be resolved: weft-pico declares no ids and asks for none. */
static inline bool _z_resolve(const _z_wexpr_t *w, _z_keyexpr_t *k) {
    if (w->scope != 0 || w->suffix == NULL) return false;
    _z_slice_view(&k->_s, (const uint8_t *)w->suffix, w->suffix_len);
    return true;
}

static inline void _z_enc_view(_z_encoding_t *e, const _z_enc_t *w, bool present) {
    memset(e, 0, sizeof(*e));
    if (!present) return;
    e->_id = w->id;
    if (w->has_schema) _z_zeroed_view(&e->_schema._s, w->schema, w->schema_len);
}

static inline void _z_sample_from(_z_sample_t *s, const _z_keyexpr_t *key, const _z_data_t *d, const _z_nexts_t *x,
                           bool reliable) {
    memset(s, 0, sizeof(*s));
    s->keyexpr = *key;
    s->kind = d->id == _Z_Z_DEL ? Z_SAMPLE_KIND_DELETE : Z_SAMPLE_KIND_PUT;
    _z_zeroed_view(&s->payload._s, d->payload.ptr, d->payload.len);
    _z_enc_view(&s->encoding, &d->enc, d->has_enc);
    if (d->has_att) _z_zeroed_view(&s->attachment._s, d->att.ptr, d->att.len);
    if (d->has_ts) {
        s->timestamp.valid = true;
        s->timestamp.time = d->ts.time;
        memcpy(s->timestamp.id.id, d->ts.id.id, 16);
    }
    uint8_t qos = x->has_qos ? x->qos : 0x05;
    s->priority = (z_priority_t)(qos & 0x07);
    s->congestion_control = (qos & 0x08) ? Z_CONGESTION_CONTROL_BLOCK : Z_CONGESTION_CONTROL_DROP;
    s->express = (qos & 0x10) != 0;
    s->reliability = reliable ? Z_RELIABILITY_RELIABLE : Z_RELIABILITY_BEST_EFFORT;
}

static inline bool _z_ke_match(const _z_kebuf_t *a, const _z_keyexpr_t *b) {
    return _z_ke_intersects(a->s, a->len, (const char *)b->_s._start, b->_s._len);
}

#if Z_FEATURE_SUBSCRIPTION == 1
static void _z_deliver(_z_session_t *s, uint8_t kind, _z_sample_t *sample) {
    for (unsigned i = 0; i < ZP_MAX_SUBSCRIBERS; i++) {
        _zs_sub_t *e = &s->subs[i];
        if (e->used && e->kind == kind && e->cb.call != NULL && _z_ke_match(&e->key, &sample->keyexpr)) {
            e->cb.call(sample, e->cb.context);
        }
    }
}

static void _z_on_push(_z_session_t *s, const _z_nmsg_t *m, const _z_rx_info_t *info) {
    _z_keyexpr_t key;
    _z_sample_t sample;
    if (!_z_resolve(&m->m.push.key, &key)) return;
    _z_sample_from(&sample, &key, &m->m.push.body, &m->ext, info->reliable);
    _z_deliver(s, _ZS_SUB_DATA, &sample);
}
#endif

#if Z_FEATURE_QUERYABLE == 1

static void _z_send_final(_z_session_t *s, uint32_t rid, uint8_t qos) {
    _z_nmsg_t f;
    memset(&f, 0, sizeof(f));
    f.id = _Z_N_RESPONSE_FINAL;
    f.m.final.rid = rid;
    f.ext.has_qos = qos != 0x05;
    f.ext.qos = qos;
    (void)_z_session_send(s, &f, true, false);
}

z_result_t _z_open_query_ref(_z_session_t *s, uint32_t rid) {
    for (unsigned i = 0; i < ZP_MAX_OPEN_QUERIES; i++) {
        _zs_open_query_t *o = &s->open_queries[i];
        if (o->used && o->rid == rid && o->gen == s->link_gen) {
            o->refs++;
            return Z_OK;
        }
    }
    return Z_ENOMEM;
}

void _z_open_query_unref(_z_session_t *s, uint32_t rid) {
    for (unsigned i = 0; i < ZP_MAX_OPEN_QUERIES; i++) {
        _zs_open_query_t *o = &s->open_queries[i];
        if (!o->used || o->rid != rid) continue;
        if (--o->refs > 0) return;
        o->used = false;
        if (o->gen == s->link_gen) _z_send_final(s, rid, o->qos);
        return;
    }
}

static void _z_on_request(_z_session_t *s, const _z_nmsg_t *m, const _z_rx_info_t *info) {
    const _z_qmsg_t *q = &m->m.request.query;
    _z_query_t query;
    memset(&query, 0, sizeof(query));
    query._s = s;
    query._rid = m->m.request.rid;
    query._qos = m->ext.has_qos ? m->ext.qos : 0x05;
    query._peer = (uint8_t)info->peer;
    /* every Request is terminated by one ResponseFinal, matched or not: sent
     * after the callbacks, or when the last z_query_clone copy is dropped */
    bool answer = s->mode == 0 || info->peer >= 0;
    _zs_open_query_t *open = NULL;
    for (unsigned i = 0; answer && open == NULL && i < ZP_MAX_OPEN_QUERIES; i++) {
        if (s->open_queries[i].used && s->open_queries[i].gen != s->link_gen) s->open_queries[i].used = false;
        if (!s->open_queries[i].used) open = &s->open_queries[i];
    }
    if (open != NULL) {
        open->used = true;
        open->refs = 1;
        open->rid = query._rid;
        open->qos = query._qos;
        open->gen = s->link_gen;
    }
    if (_z_resolve(&m->m.request.key, &query._key)) {
        if (q->params != NULL) {
            _z_zeroed_view(&query._params._s, (const uint8_t *)q->params, q->params_len);
            query._anyke = _z_has_anyke(q->params, q->params_len);
        }
        if (q->has_body) {
            _z_zeroed_view(&query._payload._s, q->body.ptr, q->body.len);
            _z_enc_view(&query._encoding, &q->body_enc, true);
        }
        if (q->has_att) _z_zeroed_view(&query._attachment._s, q->att.ptr, q->att.len);
        for (unsigned i = 0; i < ZP_MAX_QUERYABLES; i++) {
            _zs_qbl_t *e = &s->qbls[i];
            if (e->used && e->cb.call != NULL && _z_ke_match(&e->key, &query._key)) e->cb.call(&query, e->cb.context);
        }
    }
    if (open != NULL) {
        _z_open_query_unref(s, query._rid);
    } else if (answer) {
        _z_send_final(s, m->m.request.rid, query._qos);
    }
}
#endif

#if Z_FEATURE_QUERY == 1
static _zs_pending_t *_z_pending_find(_z_session_t *s, uint8_t kind, uint32_t id) {
    for (unsigned i = 0; i < ZP_MAX_PENDING_QUERIES; i++) {
        _zs_pending_t *p = &s->pending[i];
        if (p->used && p->kind == kind && p->id == id) return p;
    }
    return NULL;
}

static void _z_pending_end(_zs_pending_t *p) {
    _z_closure_reply_t cb = p->cb;
    p->used = false;
    if (cb.drop != NULL) cb.drop(cb.context);
}

void _z_session_fail_pending(_z_session_t *s) {
    for (unsigned i = 0; i < ZP_MAX_PENDING_QUERIES; i++)
        if (s->pending[i].used) _z_pending_end(&s->pending[i]);
}

void _z_session_expire_pending(_z_session_t *s, uint64_t now) {
    for (unsigned i = 0; i < ZP_MAX_PENDING_QUERIES; i++)
        if (s->pending[i].used && now >= s->pending[i].deadline_ms) _z_pending_end(&s->pending[i]);
}

static void _z_on_response(_z_session_t *s, const _z_nmsg_t *m, const _z_rx_info_t *info) {
    _zs_pending_t *p = _z_pending_find(s, _ZS_PENDING_GET, m->m.response.rid);
    _z_keyexpr_t key;
    _z_reply_t reply;
    if (p == NULL || !_z_resolve(&m->m.response.key, &key)) return;
    memset(&reply, 0, sizeof(reply));
    if (m->m.response.has_responder) {
        reply._has_replier = true;
        memcpy(reply._replier.zid.id, m->m.response.rzid.id, 16);
        reply._replier.eid = m->m.response.reid;
    }
    if (m->m.response.body_id == _Z_Z_ERR) {
        _z_zeroed_view(&reply._err.payload._s, m->m.response.body.payload.ptr, m->m.response.body.payload.len);
        _z_enc_view(&reply._err.encoding, &m->m.response.body.enc, m->m.response.body.has_enc);
    } else {
        if (!p->anyke && !_z_ke_match(&p->key, &key)) return;
        reply._is_ok = true;
        _z_sample_from(&reply._sample, &key, &m->m.response.body, &m->ext, info->reliable);
    }
    if (p->cb.call != NULL) p->cb.call(&reply, p->cb.context);
}

static void _z_on_final(_z_session_t *s, const _z_nmsg_t *m) {
    _zs_pending_t *p = _z_pending_find(s, _ZS_PENDING_GET, m->m.final.rid);
    /* on a multicast group several members may answer: wait for the timeout */
    if (p != NULL && s->mode == 0) _z_pending_end(p);
}
#else
void _z_session_fail_pending(_z_session_t *s) { (void)s; }
void _z_session_expire_pending(_z_session_t *s, uint64_t now) {
    (void)s;
    (void)now;
}
#endif

#if Z_FEATURE_LIVELINESS == 1
static void _z_token_sample(_z_sample_t *sample, const _z_keyexpr_t *key, z_sample_kind_t kind) {
    memset(sample, 0, sizeof(*sample));
    sample->keyexpr = *key;
    sample->kind = kind;
    sample->priority = Z_PRIORITY_DATA;
}
#endif

#if Z_FEATURE_LIVELINESS == 1 || _Z_PUB_KEY_IDS
static void _z_on_declare(_z_session_t *s, const _z_nmsg_t *m) {
    const _z_decl_t *d = &m->m.declare.decl;
#if _Z_PUB_KEY_IDS
    if (m->m.declare.has_iid && d->id == _Z_D_FINAL) _z_publisher_confirm_key(s, m->m.declare.iid);
#endif
#if Z_FEATURE_LIVELINESS == 1
    _z_keyexpr_t key;
    _z_sample_t sample;
#if Z_FEATURE_QUERY == 1
    if (m->m.declare.has_iid) {
        _zs_pending_t *p = _z_pending_find(s, _ZS_PENDING_LIVELINESS, m->m.declare.iid);
        if (p != NULL && d->id == _Z_D_TOKEN && _z_resolve(&d->key, &key)) {
            _z_reply_t reply;
            memset(&reply, 0, sizeof(reply));
            reply._is_ok = true;
            _z_token_sample(&reply._sample, &key, Z_SAMPLE_KIND_PUT);
            if (p->cb.call != NULL) p->cb.call(&reply, p->cb.context);
        } else if (p != NULL && d->id == _Z_D_FINAL) {
            _z_pending_end(p);
        }
    }
#endif
#if Z_FEATURE_SUBSCRIPTION == 1
    if (d->id == _Z_D_TOKEN && _z_resolve(&d->key, &key)) {
        bool store = false;
        _z_token_sample(&sample, &key, Z_SAMPLE_KIND_PUT);
        for (unsigned i = 0; i < ZP_MAX_SUBSCRIBERS; i++) {
            _zs_sub_t *e = &s->subs[i];
            if (!e->used || e->kind != _ZS_SUB_LIVELINESS || !_z_ke_match(&e->key, &key)) continue;
            /* without I: a new token; with I: history answering this subscriber */
            if (m->m.declare.has_iid && m->m.declare.iid != e->id) continue;
            store = true;
            if (e->cb.call != NULL) e->cb.call(&sample, e->cb.context);
        }
        /* remember id -> key to name the token when it is undeclared */
        for (unsigned i = 0; store && i < ZP_MAX_REMOTE_TOKENS; i++) {
            _zs_token_t *t = &s->rtokens[i];
            if (!t->used && _z_kebuf_set(&t->key, (const char *)key._s._start, key._s._len) == Z_OK) {
                t->used = true;
                t->id = d->eid;
                store = false;
            }
        }
    } else if (d->id == _Z_U_TOKEN) {
        for (unsigned i = 0; i < ZP_MAX_REMOTE_TOKENS; i++) {
            _zs_token_t *t = &s->rtokens[i];
            if (!t->used || t->id != d->eid) continue;
            t->used = false;
            _z_slice_view(&key._s, (const uint8_t *)t->key.s, t->key.len);
            _z_token_sample(&sample, &key, Z_SAMPLE_KIND_DELETE);
            _z_deliver(s, _ZS_SUB_LIVELINESS, &sample);
            break;
        }
    }
#endif
    (void)sample;
    (void)key;
#endif
    (void)s;
    (void)d;
}
#endif

void _z_session_handle(void *ctx, const _z_nmsg_t *m, const _z_rx_info_t *info) {
    _z_session_t *s = (_z_session_t *)ctx;
    switch (m->id) {
#if Z_FEATURE_SUBSCRIPTION == 1
        case _Z_N_PUSH:
            _z_on_push(s, m, info);
            break;
#endif
#if Z_FEATURE_QUERYABLE == 1
        case _Z_N_REQUEST:
            _z_on_request(s, m, info);
            break;
#endif
#if Z_FEATURE_QUERY == 1
        case _Z_N_RESPONSE:
            _z_on_response(s, m, info);
            break;
        case _Z_N_RESPONSE_FINAL:
            _z_on_final(s, m);
            break;
#endif
#if Z_FEATURE_LIVELINESS == 1 || _Z_PUB_KEY_IDS
        case _Z_N_DECLARE:
            _z_on_declare(s, m);
            break;
#endif
        default: /* Interest, OAM, other declarations: nothing for a client */
            break;
    }
    (void)s;
    (void)info;
}
