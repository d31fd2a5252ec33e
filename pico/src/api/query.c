/* Queries (get, replies) and queryables (queries, reply/reply_del/reply_err). */
#include <string.h>

#include "../keyexpr/keyexpr.h"
#include "../mem/pool.h"
#include "../mem/text.h"
#include "../session/session.h"
#include "olv.h"

static void _z_entity_null2(_z_entity_ref_t *e) { memset(e, 0, sizeof(*e)); }
static bool _z_entity_check2(const _z_entity_ref_t *e) { return e->_s != NULL; }

z_query_consolidation_t z_query_consolidation_default(void) {
    z_query_consolidation_t c = {Z_CONSOLIDATION_MODE_DEFAULT};
    return c;
}
z_query_consolidation_t z_query_consolidation_auto(void) {
    z_query_consolidation_t c = {Z_CONSOLIDATION_MODE_AUTO};
    return c;
}
z_query_consolidation_t z_query_consolidation_latest(void) {
    z_query_consolidation_t c = {Z_CONSOLIDATION_MODE_LATEST};
    return c;
}
z_query_consolidation_t z_query_consolidation_monotonic(void) {
    z_query_consolidation_t c = {Z_CONSOLIDATION_MODE_MONOTONIC};
    return c;
}
z_query_consolidation_t z_query_consolidation_none(void) {
    z_query_consolidation_t c = {Z_CONSOLIDATION_MODE_NONE};
    return c;
}
z_query_target_t z_query_target_default(void) { return Z_QUERY_TARGET_DEFAULT; }

/* ---- replies (views delivered to reply callbacks) ---- */
static void _z_reply_null(_z_reply_t *r) { memset(r, 0, sizeof(*r)); }
static bool _z_reply_check(const _z_reply_t *r) { return r->_sample.keyexpr._s._start != NULL || !r->_is_ok; }
static void _z_reply_drop(_z_reply_t *r) { (void)r; }
_ZP_OWNED_IMPL(reply, _z_reply_t, _z_reply_null, _z_reply_check, _z_reply_drop)
static void _z_reply_err_null(_z_reply_err_t *r) { memset(r, 0, sizeof(*r)); }
static bool _z_reply_err_check(const _z_reply_err_t *r) { (void)r; return true; }
static void _z_reply_err_drop(_z_reply_err_t *r) { (void)r; }
_ZP_OWNED_IMPL(reply_err, _z_reply_err_t, _z_reply_err_null, _z_reply_err_check, _z_reply_err_drop)

bool z_reply_is_ok(const z_loaned_reply_t *reply) { return reply->_is_ok; }
const z_loaned_sample_t *z_reply_ok(const z_loaned_reply_t *reply) { return &reply->_sample; }
const z_loaned_reply_err_t *z_reply_err(const z_loaned_reply_t *reply) { return &reply->_err; }
bool z_reply_replier_id(const z_loaned_reply_t *reply, z_entity_global_id_t *out_id) {
    if (reply->_has_replier) *out_id = reply->_replier;
    return reply->_has_replier;
}
const z_loaned_bytes_t *z_reply_err_payload(const z_loaned_reply_err_t *reply_err) { return &reply_err->payload; }
const z_loaned_encoding_t *z_reply_err_encoding(const z_loaned_reply_err_t *reply_err) {
    return &reply_err->encoding;
}

#if Z_FEATURE_QUERY == 1
/* Reserves a pending-query slot; returns its index or -1. Lock held. */
int _z_pending_add(_z_session_t *s, uint8_t kind, uint32_t id, const z_loaned_keyexpr_t *keyexpr, uint64_t timeout_ms,
                   z_moved_closure_reply_t *callback) {
    for (int i = 0; i < ZP_MAX_PENDING_QUERIES; i++) {
        _zs_pending_t *p = &s->pending[i];
        if (p->used) continue;
        if (_z_kebuf_set(&p->key, (const char *)keyexpr->_s._start, keyexpr->_s._len) != Z_OK) return -1;
        p->used = true;
        p->kind = kind;
        p->id = id;
        p->anyke = false;
        p->deadline_ms = _z_clock_ms() + (timeout_ms != 0 ? timeout_ms : Z_GET_TIMEOUT_DEFAULT);
        p->cb = callback->_this._val;
        memset(&callback->_this._val, 0, sizeof(callback->_this._val));
        return i;
    }
    return -1;
}

/* Ends a pending query that could not be sent. Lock held. */
void _z_pending_cancel(_z_session_t *s, int slot) {
    _z_closure_reply_t cb = s->pending[slot].cb;
    s->pending[slot].used = false;
    if (cb.drop != NULL) cb.drop(cb.context);
}

void z_get_options_default(z_get_options_t *options) {
    memset(options, 0, sizeof(*options));
    options->consolidation = z_query_consolidation_default();
    options->congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    options->priority = Z_PRIORITY_DEFAULT;
    options->target = Z_QUERY_TARGET_DEFAULT;
    options->timeout_ms = Z_GET_TIMEOUT_DEFAULT;
    options->accept_replies = Z_REPLY_KEYEXPR_DEFAULT;
}

z_result_t z_get(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr, const char *parameters,
                 z_moved_closure_reply_t *callback, z_get_options_t *options) {
    _z_session_t *s = zs->_s;
    z_get_options_t o;
    _z_nmsg_t m;
    if (options != NULL) {
        o = *options;
    } else {
        z_get_options_default(&o);
    }
    size_t params_len = parameters != NULL ? _z_strlen(parameters) : 0;
    z_result_t res = Z_EINVAL; /* the wire bounds the key and the parameters to 16 bits */
    int slot = -1;
    if (keyexpr->_s._len > UINT16_MAX || params_len > UINT16_MAX) goto done;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_REQUEST;
    m.ext.qos = _z_qos_byte(o.priority, o.congestion_control, o.is_express);
    m.ext.has_qos = m.ext.qos != 0x05;
    m.m.request.key.suffix = (const char *)keyexpr->_s._start;
    m.m.request.key.suffix_len = (uint16_t)keyexpr->_s._len;
    m.m.request.has_target = o.target != Z_QUERY_TARGET_BEST_MATCHING;
    m.m.request.target = (uint8_t)o.target;
    m.m.request.has_timeout = true;
    m.m.request.timeout = o.timeout_ms != 0 ? o.timeout_ms : Z_GET_TIMEOUT_DEFAULT;
    _z_qmsg_t *q = &m.m.request.query;
    /* wire: 0 Auto, 1 None, 2 Monotonic, 3 Latest; Auto is resolved to Latest as 1.x does */
    int cons = o.consolidation.mode == Z_CONSOLIDATION_MODE_AUTO ? 3 : (int)o.consolidation.mode + 1;
    q->has_cons = true;
    q->cons = (uint8_t)cons;
    if (params_len > 0) {
        q->params = parameters;
        q->params_len = (uint16_t)params_len;
    }
    if (o.payload != NULL) {
        q->has_body = true;
        q->body.ptr = o.payload->_this._val._s._start;
        q->body.len = o.payload->_this._val._s._len;
        if (o.encoding != NULL) _z_enc_from(&q->body_enc, &o.encoding->_this._val);
    }
    if (o.attachment != NULL && o.attachment->_this._val._s._start != NULL) {
        q->has_att = true;
        q->att.ptr = o.attachment->_this._val._s._start;
        q->att.len = o.attachment->_this._val._s._len;
    }
    res = Z_ENOMEM;
    _z_session_lock(s);
    uint32_t rid = ++s->next_rid;
    slot = _z_pending_add(s, _ZS_PENDING_GET, rid, keyexpr, o.timeout_ms, callback);
    if (slot >= 0) {
        s->pending[slot].anyke = o.accept_replies == Z_REPLY_KEYEXPR_ANY || _z_has_anyke(parameters, params_len);
        m.m.request.rid = rid;
        res = _z_session_send(s, &m, true, o.is_express);
        if (res != Z_OK) _z_pending_cancel(s, slot);
    }
    _z_session_unlock(s);
done:
    if (slot < 0) z_closure_reply_drop(callback);
    z_bytes_drop(o.payload);
    z_encoding_drop(o.encoding);
    z_bytes_drop(o.attachment);
    return res;
}
#endif

#if Z_FEATURE_QUERYABLE == 1
/* ---- queries (views delivered to queryable callbacks, or owned copies) ---- */
static void _z_query_null(_z_query_t *q) { memset(q, 0, sizeof(*q)); }
static bool _z_query_check(const _z_query_t *q) { return q->_s != NULL; }
static void _z_query_drop(_z_query_t *q) {
    if (q->_s == NULL || q->_mem == NULL) return; /* loaned views are not dropped */
    _z_session_lock(q->_s);
    _z_open_query_unref(q->_s, q->_rid);
    _z_session_unlock(q->_s);
    _z_mem_free(q->_mem);
}
_ZP_OWNED_IMPL(query, _z_query_t, _z_query_null, _z_query_check, _z_query_drop)

/* Copies `n` bytes at *cursor and points `dst` at the copy. */
static void _z_query_field(_z_slice_t *dst, const _z_slice_t *src, uint8_t **cursor) {
    _z_slice_null(dst);
    if (src->_start == NULL) return;
    if (src->_len > 0) memcpy(*cursor, src->_start, src->_len);
    dst->_start = *cursor;
    dst->_len = src->_len;
    *cursor += src->_len;
}

z_result_t z_query_clone(z_owned_query_t *dst, const z_loaned_query_t *src) {
    _z_query_t *q = &dst->_val;
    _z_query_null(q);
    if (src->_s == NULL) return Z_EINVAL;
    size_t total = src->_key._s._len + src->_params._s._len + src->_payload._s._len + src->_attachment._s._len +
                   src->_encoding._schema._s._len;
    uint8_t *mem = (uint8_t *)_z_mem_alloc(total > 0 ? total : 1), *cursor = mem;
    if (mem == NULL) return Z_ENOMEM;
    _z_session_lock(src->_s);
    z_result_t res = _z_open_query_ref(src->_s, src->_rid);
    _z_session_unlock(src->_s);
    if (res != Z_OK) {
        _z_mem_free(mem);
        return res;
    }
    *q = *src;
    q->_mem = mem;
    _z_query_field(&q->_key._s, &src->_key._s, &cursor);
    _z_query_field(&q->_params._s, &src->_params._s, &cursor);
    _z_query_field(&q->_payload._s, &src->_payload._s, &cursor);
    _z_query_field(&q->_attachment._s, &src->_attachment._s, &cursor);
    _z_query_field(&q->_encoding._schema._s, &src->_encoding._schema._s, &cursor);
    return Z_OK;
}

const z_loaned_keyexpr_t *z_query_keyexpr(const z_loaned_query_t *query) { return &query->_key; }
void z_query_parameters(const z_loaned_query_t *query, z_view_string_t *parameters) {
    _z_slice_set_view(&parameters->_val._s, query->_params._s._start, query->_params._s._len);
}
const z_loaned_bytes_t *z_query_payload(const z_loaned_query_t *query) { return &query->_payload; }
const z_loaned_encoding_t *z_query_encoding(const z_loaned_query_t *query) { return &query->_encoding; }
const z_loaned_bytes_t *z_query_attachment(const z_loaned_query_t *query) {
    return query->_attachment._s._start != NULL ? &query->_attachment : NULL;
}
z_reply_keyexpr_t z_query_accepts_replies(const z_loaned_query_t *query) {
    return query->_anyke ? Z_REPLY_KEYEXPR_ANY : Z_REPLY_KEYEXPR_MATCHING_QUERY;
}

void z_query_reply_options_default(z_query_reply_options_t *options) {
    memset(options, 0, sizeof(*options));
    options->congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    options->priority = Z_PRIORITY_DEFAULT;
}
void z_query_reply_del_options_default(z_query_reply_del_options_t *options) {
    memset(options, 0, sizeof(*options));
    options->congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    options->priority = Z_PRIORITY_DEFAULT;
}
void z_query_reply_err_options_default(z_query_reply_err_options_t *options) { options->encoding = NULL; }

/* Sends a Response (Reply Put/Del or Err) to `query`. */
static z_result_t _z_reply_send(const z_loaned_query_t *query, const z_loaned_keyexpr_t *keyexpr, uint8_t body,
                                const _z_bytes_t *payload, const _z_encoding_t *enc, const _z_bytes_t *att,
                                const z_timestamp_t *ts) {
    _z_nmsg_t m;
    const _z_keyexpr_t *key = keyexpr != NULL ? keyexpr : &query->_key;
    if (query->_s == NULL || key->_s._len > UINT16_MAX) return Z_EINVAL;
    if (!query->_anyke && body != _Z_Z_ERR &&
        !_z_ke_intersects((const char *)query->_key._s._start, query->_key._s._len, (const char *)key->_s._start,
                          key->_s._len))
        return Z_EINVAL;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_RESPONSE;
    m.ext.qos = query->_qos;
    m.ext.has_qos = query->_qos != 0x05;
    m.m.response.rid = query->_rid;
    m.m.response.key.suffix = (const char *)key->_s._start;
    m.m.response.key.suffix_len = (uint16_t)key->_s._len;
    m.m.response.body_id = body == _Z_Z_ERR ? _Z_Z_ERR : _Z_Z_REPLY;
    _z_data_fill(&m.m.response.body, body, payload, enc, att, ts);
    return _z_session_send(query->_s, &m, true, false);
}

z_result_t z_query_reply(const z_loaned_query_t *query, const z_loaned_keyexpr_t *keyexpr, z_moved_bytes_t *payload,
                         const z_query_reply_options_t *options) {
    z_query_reply_options_t o;
    if (options != NULL) {
        o = *options;
    } else {
        z_query_reply_options_default(&o);
    }
    z_result_t res = _z_reply_send(query, keyexpr, _Z_Z_PUT, payload != NULL ? &payload->_this._val : NULL,
                                   o.encoding != NULL ? &o.encoding->_this._val : NULL,
                                   o.attachment != NULL ? &o.attachment->_this._val : NULL, o.timestamp);
    z_bytes_drop(payload);
    z_encoding_drop(o.encoding);
    z_bytes_drop(o.attachment);
    return res;
}

z_result_t z_query_reply_del(const z_loaned_query_t *query, const z_loaned_keyexpr_t *keyexpr,
                             const z_query_reply_del_options_t *options) {
    z_query_reply_del_options_t o;
    if (options != NULL) {
        o = *options;
    } else {
        z_query_reply_del_options_default(&o);
    }
    z_result_t res = _z_reply_send(query, keyexpr, _Z_Z_DEL, NULL, NULL,
                                   o.attachment != NULL ? &o.attachment->_this._val : NULL, o.timestamp);
    z_bytes_drop(o.attachment);
    return res;
}

z_result_t z_query_reply_err(const z_loaned_query_t *query, z_moved_bytes_t *payload,
                             const z_query_reply_err_options_t *options) {
    z_moved_encoding_t *enc = options != NULL ? options->encoding : NULL;
    z_result_t res = _z_reply_send(query, NULL, _Z_Z_ERR, payload != NULL ? &payload->_this._val : NULL,
                                   enc != NULL ? &enc->_this._val : NULL, NULL, NULL);
    z_bytes_drop(payload);
    z_encoding_drop(enc);
    return res;
}

/* ---- queryables ---- */
static _zs_qbl_t *_z_qbl_entry(const _z_queryable_t *p) {
    if (p->_s == NULL || p->_slot >= ZP_MAX_QUERYABLES) return NULL;
    _zs_qbl_t *e = &p->_s->qbls[p->_slot];
    return e->used && e->id == p->_id ? e : NULL;
}

static void _z_queryable_drop(_z_queryable_t *p) {
    _z_session_t *s = p->_s;
    _z_closure_query_t cb = {NULL, NULL, NULL};
    if (s == NULL) return;
    _z_session_lock(s);
    _zs_qbl_t *e = _z_qbl_entry(p);
    if (e != NULL) {
        e->used = false;
        cb = e->cb;
        if (s->connected && s->mode == 0) (void)_z_send_declare(s, _Z_U_QUERYABLE, e->id, NULL, 0);
    }
    _z_session_unlock(s);
    if (cb.drop != NULL) cb.drop(cb.context);
}
_ZP_OWNED_IMPL(queryable, _z_queryable_t, _z_entity_null2, _z_entity_check2, _z_queryable_drop)

void z_queryable_options_default(z_queryable_options_t *options) { options->complete = false; }

static z_result_t _z_declare_qbl(_z_session_t *s, _z_queryable_t *out, const z_loaned_keyexpr_t *keyexpr,
                                 z_moved_closure_query_t *callback, const z_queryable_options_t *options) {
    z_result_t res = Z_ENOMEM;
    _z_entity_null2(out);
    if (s->closed) return Z_ECLOSED;
    _z_session_lock(s);
    for (uint8_t i = 0; i < ZP_MAX_QUERYABLES; i++) {
        _zs_qbl_t *e = &s->qbls[i];
        if (e->used) continue;
        res = _z_kebuf_set(&e->key, (const char *)keyexpr->_s._start, keyexpr->_s._len);
        if (res != Z_OK) break;
        e->used = true;
        e->complete = options != NULL && options->complete;
        e->id = _z_session_new_id(s);
        e->cb = callback->_this._val;
        memset(&callback->_this._val, 0, sizeof(callback->_this._val));
        out->_s = s;
        out->_slot = i;
        out->_id = e->id;
        if (s->mode == 0) (void)_z_send_declare(s, _Z_D_QUERYABLE, e->id, &e->key, e->complete ? 1u : 0u);
        break;
    }
    _z_session_unlock(s);
    if (res != Z_OK) z_closure_query_drop(callback);
    return res;
}

z_result_t z_declare_queryable(const z_loaned_session_t *zs, z_owned_queryable_t *queryable,
                               const z_loaned_keyexpr_t *keyexpr, z_moved_closure_query_t *callback,
                               const z_queryable_options_t *options) {
    return _z_declare_qbl(zs->_s, &queryable->_val, keyexpr, callback, options);
}

z_result_t z_declare_background_queryable(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                                          z_moved_closure_query_t *callback, const z_queryable_options_t *options) {
    _z_queryable_t unused;
    return _z_declare_qbl(zs->_s, &unused, keyexpr, callback, options);
}

z_result_t z_undeclare_queryable(z_moved_queryable_t *queryable) {
    z_queryable_drop(queryable);
    return Z_OK;
}

const z_loaned_keyexpr_t *z_queryable_keyexpr(const z_loaned_queryable_t *queryable) {
    static _z_keyexpr_t none;
    _zs_qbl_t *e = _z_qbl_entry(queryable);
    if (e == NULL) return &none;
    e->view._s._start = (const uint8_t *)e->key.s;
    e->view._s._len = e->key.len;
    return &e->view;
}
#else
_ZP_OWNED_IMPL(queryable, _z_queryable_t, _z_entity_null2, _z_entity_check2, _z_entity_null2)
#endif
