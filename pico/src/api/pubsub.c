/* Publication (put, delete, publishers) and subscription (subscribers, samples). */
#include <stddef.h>
#include <string.h>

#include "../session/session.h"
#include "olv.h"

/* ---- samples (views delivered to callbacks) ---- */
static void _z_sample_null(_z_sample_t *s) { memset(s, 0, sizeof(*s)); }
static bool _z_sample_check(const _z_sample_t *s) { return s->keyexpr._s._start != NULL; }
static void _z_sample_drop(_z_sample_t *s) { (void)s; }
_ZP_OWNED_IMPL(sample, _z_sample_t, _z_sample_null, _z_sample_check, _z_sample_drop)

const z_loaned_keyexpr_t *z_sample_keyexpr(const z_loaned_sample_t *sample) { return &sample->keyexpr; }
const z_loaned_bytes_t *z_sample_payload(const z_loaned_sample_t *sample) { return &sample->payload; }
const z_timestamp_t *z_sample_timestamp(const z_loaned_sample_t *sample) {
    return sample->timestamp.valid ? &sample->timestamp : NULL;
}
const z_loaned_encoding_t *z_sample_encoding(const z_loaned_sample_t *sample) { return &sample->encoding; }
z_sample_kind_t z_sample_kind(const z_loaned_sample_t *sample) { return sample->kind; }
const z_loaned_bytes_t *z_sample_attachment(const z_loaned_sample_t *sample) {
    return sample->attachment._s._start != NULL ? &sample->attachment : NULL;
}
z_priority_t z_sample_priority(const z_loaned_sample_t *sample) { return sample->priority; }
z_congestion_control_t z_sample_congestion_control(const z_loaned_sample_t *sample) {
    return sample->congestion_control;
}
bool z_sample_express(const z_loaned_sample_t *sample) { return sample->express; }
z_reliability_t z_sample_reliability(const z_loaned_sample_t *sample) { return sample->reliability; }
uint64_t z_timestamp_ntp64_time(const z_timestamp_t *ts) { return ts->time; }
z_id_t z_timestamp_id(const z_timestamp_t *ts) { return ts->id; }

/* Entity handles: a slot in the session's table plus the entity id. */
static void _z_entity_null(_z_entity_ref_t *e) { memset(e, 0, sizeof(*e)); }
static bool _z_entity_check(const _z_entity_ref_t *e) { return e->_s != NULL; }

#if Z_FEATURE_PUBLICATION == 1
/* ---- publication ---- */
typedef struct {
    const _z_slice_t *key; /* in full, when scope is 0 */
    uint16_t scope;        /* a key-expression id this session declared, or 0 */
    uint8_t kind;
    const _z_bytes_t *payload;
    const _z_encoding_t *enc;
    const _z_bytes_t *att;
    const z_timestamp_t *ts;
    uint8_t qos;
    bool reliable;
} _z_push_args_t;

static z_result_t _z_send_push(_z_session_t *s, const _z_push_args_t *a) {
    _z_nmsg_t m;
    /* a put's hot path: only the members a Push is encoded from are cleared */
    memset(&m, 0, offsetof(_z_nmsg_t, m) + sizeof(m.m.push));
    m.id = _Z_N_PUSH;
    if (a->scope != 0) {
        m.m.push.key.scope = a->scope;
        m.m.push.key.sender_mapping = true;
    } else {
        m.m.push.key.suffix = (const char *)a->key->_start;
        m.m.push.key.suffix_len = (uint16_t)a->key->_len;
    }
    m.ext.has_qos = a->qos != 0x05;
    m.ext.qos = a->qos;
    _z_data_fill(&m.m.push.body, a->kind, a->payload, a->enc, a->att, a->ts);
    if (a->key->_len > UINT16_MAX) return Z_EINVAL;
    return _z_session_send(s, &m, a->reliable, (a->qos & 0x10) != 0);
}

void z_put_options_default(z_put_options_t *options) {
    memset(options, 0, sizeof(*options));
    options->congestion_control = Z_CONGESTION_CONTROL_DEFAULT;
    options->priority = Z_PRIORITY_DEFAULT;
    options->reliability = Z_RELIABILITY_DEFAULT;
}
void z_delete_options_default(z_delete_options_t *options) {
    memset(options, 0, sizeof(*options));
    options->congestion_control = Z_CONGESTION_CONTROL_DEFAULT;
    options->priority = Z_PRIORITY_DEFAULT;
    options->reliability = Z_RELIABILITY_DEFAULT;
}

z_result_t z_put(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr, z_moved_bytes_t *payload,
                 const z_put_options_t *options) {
    z_put_options_t o;
    if (options != NULL) {
        o = *options;
    } else {
        z_put_options_default(&o);
    }
    _z_push_args_t a = {&keyexpr->_s, 0, _Z_Z_PUT, payload != NULL ? &payload->_this._val : NULL,
                        o.encoding != NULL ? &o.encoding->_this._val : NULL,
                        o.attachment != NULL ? &o.attachment->_this._val : NULL, o.timestamp,
                        _z_qos_byte(o.priority, o.congestion_control, o.is_express),
                        o.reliability == Z_RELIABILITY_RELIABLE};
    z_result_t res = _z_send_push(zs->_s, &a);
    z_bytes_drop(payload);
    z_encoding_drop(o.encoding);
    z_bytes_drop(o.attachment);
    return res;
}

z_result_t z_delete(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                    const z_delete_options_t *options) {
    z_delete_options_t o;
    if (options != NULL) {
        o = *options;
    } else {
        z_delete_options_default(&o);
    }
    _z_push_args_t a = {&keyexpr->_s, 0, _Z_Z_DEL, NULL, NULL, NULL, o.timestamp,
                        _z_qos_byte(o.priority, o.congestion_control, o.is_express),
                        o.reliability == Z_RELIABILITY_RELIABLE};
    return _z_send_push(zs->_s, &a);
}

static _zs_pub_t *_z_pub_entry(const _z_publisher_t *p) {
    if (p->_s == NULL || p->_slot >= ZP_MAX_PUBLISHERS) return NULL;
    _zs_pub_t *e = &p->_s->pubs[p->_slot];
    return e->used && e->id == p->_id ? e : NULL;
}

static void _z_publisher_drop(_z_publisher_t *p) {
    _z_session_t *s = p->_s;
    if (s == NULL) return;
    _z_session_lock(s);
    _zs_pub_t *e = _z_pub_entry(p);
    if (e != NULL) {
        e->used = false;
#if _Z_PUB_KEY_IDS
        if (e->ke_id != 0 && s->mode == 0 && s->connected) (void)_z_send_declare(s, _Z_U_KEYEXPR, e->ke_id, NULL, 0);
        e->ke_id = 0;
#endif
        _z_encoding_drop(&e->enc);
    }
    _z_session_unlock(s);
}
_ZP_OWNED_IMPL(publisher, _z_publisher_t, _z_entity_null, _z_entity_check, _z_publisher_drop)

void z_publisher_options_default(z_publisher_options_t *options) {
    memset(options, 0, sizeof(*options));
    options->congestion_control = Z_CONGESTION_CONTROL_DEFAULT;
    options->priority = Z_PRIORITY_DEFAULT;
    options->reliability = Z_RELIABILITY_DEFAULT;
}

z_result_t z_declare_publisher(const z_loaned_session_t *zs, z_owned_publisher_t *pub,
                               const z_loaned_keyexpr_t *keyexpr, const z_publisher_options_t *options) {
    z_publisher_options_t o;
    _z_session_t *s = zs->_s;
    _z_entity_null(&pub->_val);
    if (options != NULL) {
        o = *options;
    } else {
        z_publisher_options_default(&o);
    }
    z_result_t res = Z_ENOMEM;
    _z_session_lock(s);
    for (uint8_t i = 0; i < ZP_MAX_PUBLISHERS; i++) {
        _zs_pub_t *e = &s->pubs[i];
        if (e->used) continue;
        res = _z_kebuf_set(&e->key, (const char *)keyexpr->_s._start, keyexpr->_s._len);
        if (res != Z_OK) break;
        e->used = true;
        e->id = _z_session_new_id(s);
        e->qos = _z_qos_byte(o.priority, o.congestion_control, o.is_express);
        e->reliable = o.reliability == Z_RELIABILITY_RELIABLE;
        _z_encoding_null(&e->enc);
        if (o.encoding != NULL) {
            e->enc = o.encoding->_this._val;
            _z_encoding_null(&o.encoding->_this._val);
        }
        pub->_val._s = s;
        pub->_val._slot = i;
        pub->_val._id = e->id;
#if _Z_PUB_KEY_IDS
        e->ke_id = 0;
        _z_publisher_declare_key(s, e);
#endif
        break;
    }
    _z_session_unlock(s);
    z_encoding_drop(o.encoding);
    return res;
}

z_result_t z_undeclare_publisher(z_moved_publisher_t *pub) {
    z_publisher_drop(pub);
    return Z_OK;
}

void z_publisher_put_options_default(z_publisher_put_options_t *options) { memset(options, 0, sizeof(*options)); }
void z_publisher_delete_options_default(z_publisher_delete_options_t *options) {
    memset(options, 0, sizeof(*options));
}

/* Sends a Put/Del with the publisher's key and QoS (read under the lock, held while it is sent). */
static z_result_t _z_publisher_send(const z_loaned_publisher_t *pub, uint8_t kind, const _z_bytes_t *payload,
                                    const _z_encoding_t *enc, const _z_bytes_t *att, const z_timestamp_t *ts) {
    _z_slice_t kv;
    _z_session_t *s = pub->_s;
    if (s == NULL) return Z_EINVAL;
    _z_session_lock(s);
    _zs_pub_t *e = _z_pub_entry(pub);
    if (e == NULL) {
        _z_session_unlock(s);
        return Z_EINVAL;
    }
#if _Z_PUB_KEY_IDS
    /* by id once the router confirmed it on this link, else in full */
    uint16_t scope = e->ke_gen != 0 && e->ke_gen == s->link_gen ? e->ke_id : 0;
#else
    uint16_t scope = 0;
#endif
    _z_push_args_t a = {&kv, scope, kind, payload, enc != NULL ? enc : &e->enc, att, ts, e->qos, e->reliable};
    _z_slice_set_view(&kv, (const uint8_t *)e->key.s, e->key.len);
    z_result_t res = _z_send_push(s, &a);
    _z_session_unlock(s);
    return res;
}

z_result_t z_publisher_put(const z_loaned_publisher_t *pub, z_moved_bytes_t *payload,
                           const z_publisher_put_options_t *options) {
    z_publisher_put_options_t o;
    if (options != NULL) {
        o = *options;
    } else {
        z_publisher_put_options_default(&o);
    }
    z_result_t res = _z_publisher_send(pub, _Z_Z_PUT, payload != NULL ? &payload->_this._val : NULL,
                                       o.encoding != NULL ? &o.encoding->_this._val : NULL,
                                       o.attachment != NULL ? &o.attachment->_this._val : NULL, o.timestamp);
    z_bytes_drop(payload);
    z_encoding_drop(o.encoding);
    z_bytes_drop(o.attachment);
    return res;
}

z_result_t z_publisher_delete(const z_loaned_publisher_t *pub, const z_publisher_delete_options_t *options) {
    return _z_publisher_send(pub, _Z_Z_DEL, NULL, NULL, NULL, options != NULL ? options->timestamp : NULL);
}

const z_loaned_keyexpr_t *z_publisher_keyexpr(const z_loaned_publisher_t *publisher) {
    static _z_keyexpr_t none;
    _zs_pub_t *e = _z_pub_entry(publisher);
    if (e == NULL) return &none;
    e->view._s._start = (const uint8_t *)e->key.s;
    e->view._s._len = e->key.len;
    return &e->view;
}
#else
_ZP_OWNED_IMPL(publisher, _z_publisher_t, _z_entity_null, _z_entity_check, _z_entity_null)
#endif

#if Z_FEATURE_SUBSCRIPTION == 1
/* ---- subscription ---- */
static _zs_sub_t *_z_sub_entry(const _z_subscriber_t *p) {
    if (p->_s == NULL || p->_slot >= ZP_MAX_SUBSCRIBERS) return NULL;
    _zs_sub_t *e = &p->_s->subs[p->_slot];
    return e->used && e->id == p->_id ? e : NULL;
}

/* Declares a subscriber (data or liveliness) in the table and on the wire. */
z_result_t _z_declare_sub(_z_session_t *s, _z_subscriber_t *out, const z_loaned_keyexpr_t *keyexpr,
                          z_moved_closure_sample_t *callback, uint8_t kind, bool history) {
    z_result_t res = Z_ENOMEM;
    _zs_sub_t *e = NULL;
    _z_entity_null(out);
    if (s->closed) return Z_ECLOSED;
    _z_session_lock(s);
    for (uint8_t i = 0; i < ZP_MAX_SUBSCRIBERS; i++) {
        e = &s->subs[i];
        if (e->used) continue;
        res = _z_kebuf_set(&e->key, (const char *)keyexpr->_s._start, keyexpr->_s._len);
        if (res != Z_OK) break;
        e->used = true;
        e->kind = kind;
        e->history = history;
        e->id = _z_session_new_id(s);
        e->cb = callback->_this._val;
        memset(&callback->_this._val, 0, sizeof(callback->_this._val));
        out->_s = s;
        out->_slot = i;
        out->_id = e->id;
        if (s->mode != 0) break; /* peers: matching is local */
        if (kind == _ZS_SUB_DATA) {
            (void)_z_send_declare(s, _Z_D_SUBSCRIBER, e->id, &e->key, 0);
        } else {
            (void)_z_send_interest(s, history ? _Z_INTEREST_CURRENT_FUTURE : _Z_INTEREST_FUTURE, e->id, _Z_IOPT_T,
                                   &e->key);
        }
        break;
    }
    _z_session_unlock(s);
    if (res != Z_OK) z_closure_sample_drop(callback);
    return res;
}

static void _z_subscriber_drop(_z_subscriber_t *p) {
    _z_session_t *s = p->_s;
    _z_closure_sample_t cb = {NULL, NULL, NULL};
    if (s == NULL) return;
    _z_session_lock(s);
    _zs_sub_t *e = _z_sub_entry(p);
    if (e != NULL) {
        e->used = false;
        cb = e->cb;
        if (s->connected && s->mode == 0) {
            if (e->kind == _ZS_SUB_DATA) {
                (void)_z_send_declare(s, _Z_U_SUBSCRIBER, e->id, NULL, 0);
            } else {
                (void)_z_send_interest(s, _Z_INTEREST_FINAL, e->id, 0, NULL);
            }
        }
    }
    _z_session_unlock(s);
    if (cb.drop != NULL) cb.drop(cb.context);
}
_ZP_OWNED_IMPL(subscriber, _z_subscriber_t, _z_entity_null, _z_entity_check, _z_subscriber_drop)

void z_subscriber_options_default(z_subscriber_options_t *options) { options->__dummy = 0; }

z_result_t z_declare_subscriber(const z_loaned_session_t *zs, z_owned_subscriber_t *sub,
                                const z_loaned_keyexpr_t *keyexpr, z_moved_closure_sample_t *callback,
                                const z_subscriber_options_t *options) {
    (void)options;
    return _z_declare_sub(zs->_s, &sub->_val, keyexpr, callback, _ZS_SUB_DATA, false);
}

z_result_t z_declare_background_subscriber(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                                           z_moved_closure_sample_t *callback, const z_subscriber_options_t *options) {
    _z_subscriber_t unused;
    (void)options;
    return _z_declare_sub(zs->_s, &unused, keyexpr, callback, _ZS_SUB_DATA, false);
}

z_result_t z_undeclare_subscriber(z_moved_subscriber_t *sub) {
    z_subscriber_drop(sub);
    return Z_OK;
}

const z_loaned_keyexpr_t *z_subscriber_keyexpr(const z_loaned_subscriber_t *subscriber) {
    static _z_keyexpr_t none;
    _zs_sub_t *e = _z_sub_entry(subscriber);
    if (e == NULL) return &none;
    e->view._s._start = (const uint8_t *)e->key.s;
    e->view._s._len = e->key.len;
    return &e->view;
}
#else
_ZP_OWNED_IMPL(subscriber, _z_subscriber_t, _z_entity_null, _z_entity_check, _z_entity_null)
#endif
