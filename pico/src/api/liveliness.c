/* Liveliness: tokens (DeclareToken), subscribers (Interest on tokens), get (Current interest). */
#include <string.h>

#include "../session/session.h"
#include "olv.h"
#include "zenoh-pico/api/liveliness.h"

static void _z_token_null(_z_liveliness_token_t *t) { memset(t, 0, sizeof(*t)); }
static bool _z_token_check(const _z_liveliness_token_t *t) { return t->_s != NULL; }

#if Z_FEATURE_LIVELINESS == 1
static void _z_token_drop(_z_liveliness_token_t *t) {
    _z_session_t *s = t->_s;
    if (s == NULL || t->_slot >= ZP_MAX_TOKENS) return;
    _z_session_lock(s);
    _zs_token_t *e = &s->tokens[t->_slot];
    if (e->used && e->id == t->_id) {
        e->used = false;
        if (s->connected) (void)_z_send_declare(s, _Z_U_TOKEN, e->id, NULL, 0);
    }
    _z_session_unlock(s);
}
_ZP_OWNED_IMPL(liveliness_token, _z_liveliness_token_t, _z_token_null, _z_token_check, _z_token_drop)

z_result_t z_liveliness_token_options_default(z_liveliness_token_options_t *options) {
    options->__dummy = 0;
    return Z_OK;
}

z_result_t z_liveliness_declare_token(const z_loaned_session_t *zs, z_owned_liveliness_token_t *token,
                                      const z_loaned_keyexpr_t *keyexpr, const z_liveliness_token_options_t *options) {
    _z_session_t *s = zs->_s;
    z_result_t res = Z_ENOMEM;
    (void)options;
    _z_token_null(&token->_val);
    if (s->closed) return Z_ECLOSED;
    _z_session_lock(s);
    for (uint8_t i = 0; i < ZP_MAX_TOKENS; i++) {
        _zs_token_t *e = &s->tokens[i];
        if (e->used) continue;
        res = _z_kebuf_set(&e->key, (const char *)keyexpr->_s._start, keyexpr->_s._len);
        if (res != Z_OK) break;
        e->used = true;
        e->id = _z_session_new_id(s);
        token->_val._s = s;
        token->_val._slot = i;
        token->_val._id = e->id;
        (void)_z_send_declare(s, _Z_D_TOKEN, e->id, &e->key, 0);
        break;
    }
    _z_session_unlock(s);
    return res;
}

z_result_t z_liveliness_undeclare_token(z_moved_liveliness_token_t *token) {
    z_liveliness_token_drop(token);
    return Z_OK;
}

#if Z_FEATURE_SUBSCRIPTION == 1
z_result_t z_liveliness_subscriber_options_default(z_liveliness_subscriber_options_t *options) {
    options->history = false;
    return Z_OK;
}

z_result_t z_liveliness_declare_subscriber(const z_loaned_session_t *zs, z_owned_subscriber_t *sub,
                                           const z_loaned_keyexpr_t *keyexpr, z_moved_closure_sample_t *callback,
                                           z_liveliness_subscriber_options_t *options) {
    return _z_declare_sub(zs->_s, &sub->_val, keyexpr, callback, _ZS_SUB_LIVELINESS,
                          options != NULL && options->history);
}

z_result_t z_liveliness_declare_background_subscriber(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                                                      z_moved_closure_sample_t *callback,
                                                      z_liveliness_subscriber_options_t *options) {
    _z_subscriber_t unused;
    return _z_declare_sub(zs->_s, &unused, keyexpr, callback, _ZS_SUB_LIVELINESS,
                          options != NULL && options->history);
}
#endif

#if Z_FEATURE_QUERY == 1
z_result_t z_liveliness_get_options_default(z_liveliness_get_options_t *options) {
    options->timeout_ms = Z_GET_TIMEOUT_DEFAULT;
    return Z_OK;
}

z_result_t z_liveliness_get(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                            z_moved_closure_reply_t *callback, z_liveliness_get_options_t *options) {
    _z_session_t *s = zs->_s;
    z_result_t res = Z_ENOMEM;
    if (keyexpr->_s._len >= ZP_KEYEXPR_CAPACITY) { /* longer than a pending query keeps */
        z_closure_reply_drop(callback);
        return Z_ENOSPACE;
    }
    _z_session_lock(s);
    uint32_t id = _z_session_new_id(s);
    int slot = _z_pending_add(s, _ZS_PENDING_LIVELINESS, id, keyexpr,
                              options != NULL ? options->timeout_ms : Z_GET_TIMEOUT_DEFAULT, callback);
    if (slot >= 0) { /* the interest names the key the pending query keeps */
        res = s->mode == 0 ? _z_send_interest(s, _Z_INTEREST_CURRENT, id, _Z_IOPT_T, &s->pending[slot].key) : Z_OK;
        if (res != Z_OK) _z_pending_cancel(s, slot);
    }
    _z_session_unlock(s);
    if (slot < 0) z_closure_reply_drop(callback);
    return res;
}
#endif
#else
_ZP_OWNED_IMPL(liveliness_token, _z_liveliness_token_t, _z_token_null, _z_token_check, _z_token_null)
#endif
