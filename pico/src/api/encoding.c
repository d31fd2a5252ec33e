/* Encodings: predefined ids 0..52, "mime;schema" strings, ownership. */
#include <string.h>

#include "../mem/text.h"
#include "olv.h"
#include "zenoh-pico/api/encoding.h"

#define _Z_ENC_CUSTOM 0xffffu

void _z_encoding_null(_z_encoding_t *e) { memset(e, 0, sizeof(*e)); }
static bool _z_encoding_check(const _z_encoding_t *e) { (void)e; return true; }
void _z_encoding_drop(_z_encoding_t *e) { _z_slice_drop(&e->_schema._s); e->_id = 0; }

_ZP_OWNED_IMPL(encoding, _z_encoding_t, _z_encoding_null, _z_encoding_check, _z_encoding_drop)

#define _ZP_ENC_CONST(suffix, id, name)                            \
    static const _z_encoding_t _zp_enc_##suffix = {id, {{NULL, 0, NULL, NULL}}}; \
    const z_loaned_encoding_t *z_encoding_##suffix(void) { return &_zp_enc_##suffix; }
ZP_ENCODING_LIST(_ZP_ENC_CONST)
const z_loaned_encoding_t *z_encoding_loan_default(void) { return z_encoding_zenoh_bytes(); }

#define _ZP_ENC_NAME(suffix, id, name) name,
static const char *const _zp_enc_names[] = {ZP_ENCODING_LIST(_ZP_ENC_NAME)};
#define _ZP_ENC_COUNT (sizeof(_zp_enc_names) / sizeof(_zp_enc_names[0]))

z_result_t z_encoding_from_substr(z_owned_encoding_t *encoding, const char *s, size_t len) {
    _z_encoding_null(&encoding->_val);
    if (s == NULL || len == 0) return Z_OK;
    const char *semi = memchr(s, ';', len);
    size_t name_len = semi != NULL ? (size_t)(semi - s) : len;
    for (uint16_t i = 0; i < _ZP_ENC_COUNT; i++) {
        if (_z_strlen(_zp_enc_names[i]) == name_len && memcmp(_zp_enc_names[i], s, name_len) == 0) {
            encoding->_val._id = i;
            if (semi == NULL) return Z_OK;
            return _z_slice_copy(&encoding->_val._schema._s, (const uint8_t *)semi + 1, len - name_len - 1);
        }
    }
    /* unknown: custom id with the whole string as schema */
    encoding->_val._id = _Z_ENC_CUSTOM;
    return _z_slice_copy(&encoding->_val._schema._s, (const uint8_t *)s, len);
}
z_result_t z_encoding_from_str(z_owned_encoding_t *encoding, const char *s) {
    return z_encoding_from_substr(encoding, s, s != NULL ? _z_strlen(s) : 0);
}
z_result_t z_encoding_set_schema_from_substr(z_loaned_encoding_t *encoding, const char *schema, size_t len) {
    _z_slice_drop(&encoding->_schema._s);
    return _z_slice_copy(&encoding->_schema._s, (const uint8_t *)schema, len);
}
z_result_t z_encoding_set_schema_from_str(z_loaned_encoding_t *encoding, const char *schema) {
    return z_encoding_set_schema_from_substr(encoding, schema, _z_strlen(schema));
}
z_result_t z_encoding_to_string(const z_loaned_encoding_t *encoding, z_owned_string_t *string) {
    char buf[ZP_POOL_BLOCK_SIZE > 128 ? 128 : ZP_POOL_BLOCK_SIZE];
    size_t n = 0, sl = encoding->_schema._s._len;
    const char *name = encoding->_id < _ZP_ENC_COUNT ? _zp_enc_names[encoding->_id] : "";
    size_t nl = _z_strlen(name);
    if (nl + 1 + sl >= sizeof(buf)) return Z_ENOSPACE;
    memcpy(buf, name, nl);
    n = nl;
    if (sl > 0) {
        if (nl > 0) buf[n++] = ';';
        memcpy(buf + n, encoding->_schema._s._start, sl);
        n += sl;
    }
    return _z_slice_copy(&string->_val._s, (const uint8_t *)buf, n);
}
bool z_encoding_equals(const z_loaned_encoding_t *l, const z_loaned_encoding_t *r) {
    return l->_id == r->_id && l->_schema._s._len == r->_schema._s._len &&
           (l->_schema._s._len == 0 || memcmp(l->_schema._s._start, r->_schema._s._start, l->_schema._s._len) == 0);
}
z_result_t z_encoding_clone(z_owned_encoding_t *dst, const z_loaned_encoding_t *src) {
    _z_encoding_null(&dst->_val);
    dst->_val._id = src->_id;
    if (src->_schema._s._len == 0) return Z_OK;
    return _z_slice_copy(&dst->_val._schema._s, src->_schema._s._start, src->_schema._s._len);
}
