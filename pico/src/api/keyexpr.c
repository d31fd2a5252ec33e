/* Key expressions of the public API. */
#include <string.h>

#include "../keyexpr/keyexpr.h"
#include "../mem/text.h"
#include "olv.h"

static void _z_keyexpr_null(_z_keyexpr_t *k) { _z_slice_null(&k->_s); }
static bool _z_keyexpr_check(const _z_keyexpr_t *k) { return _z_slice_check(&k->_s); }
static void _z_keyexpr_drop(_z_keyexpr_t *k) { _z_slice_drop(&k->_s); }

_ZP_OWNED_IMPL(keyexpr, _z_keyexpr_t, _z_keyexpr_null, _z_keyexpr_check, _z_keyexpr_drop)
_ZP_VIEW_IMPL(keyexpr, _z_keyexpr_t, _z_keyexpr_null, _z_keyexpr_check)

z_result_t z_keyexpr_is_canon(const char *start, size_t len) { return _z_ke_check(start, len); }

z_result_t z_view_keyexpr_from_substr(z_view_keyexpr_t *keyexpr, const char *name, size_t len) {
    _z_keyexpr_null(&keyexpr->_val);
    _Z_TRY(_z_ke_check(name, len));
    _z_slice_set_view(&keyexpr->_val._s, (const uint8_t *)name, len);
    return Z_OK;
}
z_result_t z_view_keyexpr_from_str(z_view_keyexpr_t *keyexpr, const char *name) {
    if (name == NULL) return Z_EINVAL;
    return z_view_keyexpr_from_substr(keyexpr, name, _z_strlen(name));
}
void z_view_keyexpr_from_substr_unchecked(z_view_keyexpr_t *keyexpr, const char *name, size_t len) {
    _z_slice_set_view(&keyexpr->_val._s, (const uint8_t *)name, len);
}
void z_view_keyexpr_from_str_unchecked(z_view_keyexpr_t *keyexpr, const char *name) {
    z_view_keyexpr_from_substr_unchecked(keyexpr, name, _z_strlen(name));
}
z_result_t z_keyexpr_from_substr(z_owned_keyexpr_t *keyexpr, const char *name, size_t len) {
    _z_keyexpr_null(&keyexpr->_val);
    _Z_TRY(_z_ke_check(name, len));
    return _z_slice_copy(&keyexpr->_val._s, (const uint8_t *)name, len);
}
z_result_t z_keyexpr_from_str(z_owned_keyexpr_t *keyexpr, const char *name) {
    if (name == NULL) return Z_EINVAL;
    return z_keyexpr_from_substr(keyexpr, name, _z_strlen(name));
}
z_result_t z_keyexpr_clone(z_owned_keyexpr_t *dst, const z_loaned_keyexpr_t *src) {
    return _z_slice_copy(&dst->_val._s, src->_s._start, src->_s._len);
}
z_result_t z_keyexpr_as_view_string(const z_loaned_keyexpr_t *keyexpr, z_view_string_t *str) {
    _z_slice_set_view(&str->_val._s, keyexpr->_s._start, keyexpr->_s._len);
    return Z_OK;
}
bool z_keyexpr_includes(const z_loaned_keyexpr_t *l, const z_loaned_keyexpr_t *r) {
    return _z_ke_includes((const char *)l->_s._start, l->_s._len, (const char *)r->_s._start, r->_s._len);
}
bool z_keyexpr_intersects(const z_loaned_keyexpr_t *l, const z_loaned_keyexpr_t *r) {
    return _z_ke_intersects((const char *)l->_s._start, l->_s._len, (const char *)r->_s._start, r->_s._len);
}
bool z_keyexpr_equals(const z_loaned_keyexpr_t *l, const z_loaned_keyexpr_t *r) {
    return l->_s._len == r->_s._len && memcmp(l->_s._start, r->_s._start, l->_s._len) == 0;
}
z_result_t z_declare_keyexpr(const z_loaned_session_t *zs, z_owned_keyexpr_t *declared_keyexpr,
                             const z_loaned_keyexpr_t *keyexpr) {
    (void)zs;
    return z_keyexpr_clone(declared_keyexpr, keyexpr);
}
z_result_t z_undeclare_keyexpr(const z_loaned_session_t *zs, z_moved_keyexpr_t *keyexpr) {
    (void)zs;
    z_keyexpr_drop(keyexpr);
    return Z_OK;
}
