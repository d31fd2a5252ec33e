/* Queriers: a key expression and get options kept for repeated gets. */
#include <string.h>

#include "../session/session.h"
#include "olv.h"

static void _z_querier_null(_z_querier_t *q) { memset(q, 0, sizeof(*q)); }
static bool _z_querier_check(const _z_querier_t *q) { return q->_s != NULL; }
static void _z_querier_drop(_z_querier_t *q) {
    _z_slice_drop(&q->_key._s);
    _z_encoding_drop(&q->_encoding);
}
_ZP_OWNED_IMPL(querier, _z_querier_t, _z_querier_null, _z_querier_check, _z_querier_drop)

#if Z_FEATURE_QUERY == 1
void z_querier_options_default(z_querier_options_t *options) {
    z_get_options_t g;
    z_get_options_default(&g);
    memset(options, 0, sizeof(*options));
    options->target = g.target;
    options->consolidation = g.consolidation;
    options->congestion_control = g.congestion_control;
    options->priority = g.priority;
    options->timeout_ms = g.timeout_ms;
    options->accept_replies = g.accept_replies;
}

void z_querier_get_options_default(z_querier_get_options_t *options) { memset(options, 0, sizeof(*options)); }

z_result_t z_declare_querier(const z_loaned_session_t *zs, z_owned_querier_t *querier,
                             const z_loaned_keyexpr_t *keyexpr, z_querier_options_t *options) {
    z_querier_options_t o;
    _z_querier_t *q = &querier->_val;
    _z_querier_null(q);
    if (options != NULL) {
        o = *options;
    } else {
        z_querier_options_default(&o);
    }
    z_result_t res = _z_slice_copy(&q->_key._s, keyexpr->_s._start, keyexpr->_s._len);
    if (res == Z_OK && o.encoding != NULL) {
        q->_encoding = o.encoding->_this._val;
        _z_encoding_null(&o.encoding->_this._val);
    }
    z_encoding_drop(o.encoding);
    if (res != Z_OK) return res;
    q->_s = zs->_s;
    q->_target = o.target;
    q->_consolidation = o.consolidation.mode;
    q->_congestion_control = o.congestion_control;
    q->_priority = o.priority;
    q->_is_express = o.is_express;
    q->_timeout_ms = o.timeout_ms;
    q->_accept_replies = o.accept_replies;
    return Z_OK;
}

z_result_t z_undeclare_querier(z_moved_querier_t *querier) {
    z_querier_drop(querier);
    return Z_OK;
}

z_result_t z_querier_get(const z_loaned_querier_t *querier, const char *parameters, z_moved_closure_reply_t *callback,
                         z_querier_get_options_t *options) {
    z_get_options_t g;
    _z_session_ref_t session = {querier->_s};
    z_owned_encoding_t enc;
    z_get_options_default(&g);
    g.target = querier->_target;
    g.consolidation.mode = querier->_consolidation;
    g.congestion_control = querier->_congestion_control;
    g.priority = querier->_priority;
    g.is_express = querier->_is_express;
    g.timeout_ms = querier->_timeout_ms;
    g.accept_replies = querier->_accept_replies;
    if (options != NULL) {
        g.payload = options->payload;
        g.encoding = options->encoding;
        g.attachment = options->attachment;
    }
    if (g.encoding == NULL && (querier->_encoding._id != 0 || querier->_encoding._schema._s._len > 0) &&
        z_encoding_clone(&enc, &querier->_encoding) == Z_OK) {
        g.encoding = z_encoding_move(&enc);
    }
    if (querier->_s == NULL) {
        z_closure_reply_drop(callback);
        return Z_EINVAL;
    }
    return z_get(&session, &querier->_key, parameters, callback, &g);
}

const z_loaned_keyexpr_t *z_querier_keyexpr(const z_loaned_querier_t *querier) { return &querier->_key; }
#endif
