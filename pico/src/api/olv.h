/* Internal: implementation of the owned/loaned/moved/view functions. */
#ifndef WEFT_PICO_API_OLV_H
#define WEFT_PICO_API_OLV_H

#include "../codec/rw.h"
#include "zenoh-pico/api/primitives.h"

/* null_fn(type *), check_fn(const type *) -> bool, drop_fn(type *) */
#define _ZP_OWNED_IMPL(name, type, null_fn, check_fn, drop_fn)                                          \
    void z_internal_##name##_null(z_owned_##name##_t *obj) { null_fn(&obj->_val); }                    \
    bool z_internal_##name##_check(const z_owned_##name##_t *obj) { return check_fn(&obj->_val); }     \
    const z_loaned_##name##_t *z_##name##_loan(const z_owned_##name##_t *obj) { return &obj->_val; }   \
    z_loaned_##name##_t *z_##name##_loan_mut(z_owned_##name##_t *obj) { return &obj->_val; }           \
    z_moved_##name##_t *z_##name##_move(z_owned_##name##_t *obj) { return (z_moved_##name##_t *)obj; } \
    void z_##name##_take(z_owned_##name##_t *obj, z_moved_##name##_t *src) {                           \
        *obj = src->_this;                                                                              \
        null_fn(&src->_this._val);                                                                      \
    }                                                                                                   \
    void z_##name##_drop(z_moved_##name##_t *obj) {                                                     \
        if (obj == NULL) return;                                                                        \
        drop_fn(&obj->_this._val);                                                                      \
        null_fn(&obj->_this._val);                                                                      \
    }

#define _ZP_VIEW_IMPL(name, type, null_fn, check_fn)                                                        \
    bool z_view_##name##_is_empty(const z_view_##name##_t *obj) { return !check_fn(&obj->_val); }         \
    const z_loaned_##name##_t *z_view_##name##_loan(const z_view_##name##_t *obj) { return &obj->_val; } \
    z_loaned_##name##_t *z_view_##name##_loan_mut(z_view_##name##_t *obj) { return &obj->_val; }         \
    void z_view_##name##_empty(z_view_##name##_t *obj) { null_fn(&obj->_val); }

/* Shared slice helpers (bytes.c). */
void _z_slice_null(_z_slice_t *s);
bool _z_slice_check(const _z_slice_t *s);
void _z_slice_drop(_z_slice_t *s);
void _z_slice_set_view(_z_slice_t *s, const uint8_t *p, size_t len);
/* Copies into pool (or heap) storage; Z_ENOMEM when none is left. */
z_result_t _z_slice_copy(_z_slice_t *dst, const uint8_t *p, size_t len);
void _z_encoding_null(_z_encoding_t *e);
void _z_encoding_drop(_z_encoding_t *e);

#endif
