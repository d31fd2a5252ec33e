/* Closures: a callback, an optional drop, a context. */
#include <string.h>

#include "olv.h"

#define _ZP_CLOSURE_IMPL(name, cb_type, arg_type)                                                          \
    static void _z_##name##_null(_z_##name##_t *c) { memset(c, 0, sizeof(*c)); }                          \
    static bool _z_##name##_check(const _z_##name##_t *c) { return c->call != NULL; }                     \
    static void _z_##name##_drop(_z_##name##_t *c) {                                                       \
        if (c->drop != NULL) c->drop(c->context);                                                          \
    }                                                                                                      \
    _ZP_OWNED_IMPL(name, _z_##name##_t, _z_##name##_null, _z_##name##_check, _z_##name##_drop)             \
    z_result_t z_##name(z_owned_##name##_t *closure, cb_type call, z_closure_drop_callback_t drop, void *context) { \
        closure->_val.call = call;                                                                         \
        closure->_val.drop = drop;                                                                         \
        closure->_val.context = context;                                                                   \
        return Z_OK;                                                                                       \
    }                                                                                                      \
    void z_##name##_call(const z_loaned_##name##_t *closure, arg_type arg) {                               \
        if (closure->call != NULL) closure->call(arg, closure->context);                                   \
    }

_ZP_CLOSURE_IMPL(closure_sample, z_closure_sample_callback_t, z_loaned_sample_t *)
_ZP_CLOSURE_IMPL(closure_query, z_closure_query_callback_t, z_loaned_query_t *)
_ZP_CLOSURE_IMPL(closure_reply, z_closure_reply_callback_t, z_loaned_reply_t *)
_ZP_CLOSURE_IMPL(closure_zid, z_closure_zid_callback_t, const z_id_t *)
_ZP_CLOSURE_IMPL(closure_hello, z_closure_hello_callback_t, z_loaned_hello_t *)
