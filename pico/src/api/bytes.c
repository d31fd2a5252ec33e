/* Slices, bytes and strings: views, copies into the pool, ownership. */
#include <string.h>

#include "../mem/pool.h"
#include "../mem/text.h"
#include "olv.h"

static const uint8_t _z_empty_byte = 0;

void _z_slice_null(_z_slice_t *s) { memset(s, 0, sizeof(*s)); }
bool _z_slice_check(const _z_slice_t *s) { return s->_start != NULL; }
void _z_slice_drop(_z_slice_t *s) {
    if (s->_deleter != NULL) s->_deleter((void *)(uintptr_t)s->_start, s->_context);
    _z_slice_null(s);
}

void _z_slice_set_view(_z_slice_t *s, const uint8_t *p, size_t len) {
    s->_start = p != NULL ? p : &_z_empty_byte;
    s->_len = len;
    s->_deleter = NULL;
    s->_context = NULL;
}

/* Copies with a trailing NUL (so copied strings can be printed). */
z_result_t _z_slice_copy(_z_slice_t *dst, const uint8_t *p, size_t len) {
    _z_slice_null(dst);
    uint8_t *mem = (uint8_t *)_z_mem_alloc(len + 1);
    if (mem == NULL) return Z_ENOMEM;
    if (len > 0) memcpy(mem, p, len);
    mem[len] = 0;
    dst->_start = mem;
    dst->_len = len;
    dst->_deleter = _z_mem_deleter;
    return Z_OK;
}

static void _z_bytes_null(_z_bytes_t *b) { _z_slice_null(&b->_s); }
static bool _z_bytes_check(const _z_bytes_t *b) { return _z_slice_check(&b->_s); }
static void _z_bytes_drop(_z_bytes_t *b) { _z_slice_drop(&b->_s); }
static void _z_string_null(_z_string_t *b) { _z_slice_null(&b->_s); }
static bool _z_string_check(const _z_string_t *b) { return _z_slice_check(&b->_s); }
static void _z_string_drop(_z_string_t *b) { _z_slice_drop(&b->_s); }

_ZP_OWNED_IMPL(slice, _z_slice_t, _z_slice_null, _z_slice_check, _z_slice_drop)
_ZP_VIEW_IMPL(slice, _z_slice_t, _z_slice_null, _z_slice_check)
_ZP_OWNED_IMPL(bytes, _z_bytes_t, _z_bytes_null, _z_bytes_check, _z_bytes_drop)
_ZP_OWNED_IMPL(string, _z_string_t, _z_string_null, _z_string_check, _z_string_drop)
_ZP_VIEW_IMPL(string, _z_string_t, _z_string_null, _z_string_check)

/* ---- slices ---- */
z_result_t z_slice_copy_from_buf(z_owned_slice_t *slice, const uint8_t *data, size_t len) {
    return _z_slice_copy(&slice->_val, data, len);
}
z_result_t z_slice_from_buf(z_owned_slice_t *slice, uint8_t *data, size_t len,
                            void (*deleter)(void *data, void *context), void *context) {
    _z_slice_set_view(&slice->_val, data, len);
    slice->_val._deleter = deleter;
    slice->_val._context = context;
    return Z_OK;
}
z_result_t z_view_slice_from_buf(z_view_slice_t *slice, const uint8_t *data, size_t len) {
    _z_slice_set_view(&slice->_val, data, len);
    return Z_OK;
}
void z_slice_empty(z_owned_slice_t *slice) { _z_slice_null(&slice->_val); }
const uint8_t *z_slice_data(const z_loaned_slice_t *slice) { return slice->_start; }
size_t z_slice_len(const z_loaned_slice_t *slice) { return slice->_len; }
bool z_slice_is_empty(const z_loaned_slice_t *slice) { return slice->_len == 0; }

/* ---- strings ---- */
z_result_t z_view_string_from_str(z_view_string_t *str, const char *value) {
    if (value == NULL) return Z_EINVAL;
    _z_slice_set_view(&str->_val._s, (const uint8_t *)value, _z_strlen(value));
    return Z_OK;
}
z_result_t z_view_string_from_substr(z_view_string_t *str, const char *value, size_t len) {
    _z_slice_set_view(&str->_val._s, (const uint8_t *)value, len);
    return Z_OK;
}
const char *z_string_data(const z_loaned_string_t *str) { return (const char *)str->_s._start; }
size_t z_string_len(const z_loaned_string_t *str) { return str->_s._len; }
z_result_t z_string_copy_from_str(z_owned_string_t *str, const char *value) {
    if (value == NULL) return Z_EINVAL;
    return _z_slice_copy(&str->_val._s, (const uint8_t *)value, _z_strlen(value));
}
z_result_t z_string_copy_from_substr(z_owned_string_t *str, const char *value, size_t len) {
    return _z_slice_copy(&str->_val._s, (const uint8_t *)value, len);
}
z_result_t z_string_from_str(z_owned_string_t *str, char *value, void (*deleter)(void *value, void *context),
                             void *context) {
    if (value == NULL) return Z_EINVAL;
    _z_slice_set_view(&str->_val._s, (const uint8_t *)value, _z_strlen(value));
    str->_val._s._deleter = deleter;
    str->_val._s._context = context;
    return Z_OK;
}
void z_string_empty(z_owned_string_t *str) { _z_slice_null(&str->_val._s); }
bool z_string_is_empty(const z_loaned_string_t *str) { return str->_s._len == 0; }
const z_loaned_slice_t *z_string_as_slice(const z_loaned_string_t *str) { return &str->_s; }
z_result_t z_string_clone(z_owned_string_t *dst, const z_loaned_string_t *src) {
    return _z_slice_copy(&dst->_val._s, src->_s._start, src->_s._len);
}

/* ---- bytes ---- */
z_result_t z_bytes_copy_from_buf(z_owned_bytes_t *bytes, const uint8_t *data, size_t len) {
    return _z_slice_copy(&bytes->_val._s, data, len);
}
z_result_t z_bytes_from_buf(z_owned_bytes_t *bytes, uint8_t *data, size_t len,
                            void (*deleter)(void *data, void *context), void *context) {
    _z_slice_set_view(&bytes->_val._s, data, len);
    bytes->_val._s._deleter = deleter;
    bytes->_val._s._context = context;
    return Z_OK;
}
z_result_t z_bytes_from_static_buf(z_owned_bytes_t *bytes, const uint8_t *data, size_t len) {
    _z_slice_set_view(&bytes->_val._s, data, len);
    return Z_OK;
}
z_result_t z_bytes_copy_from_str(z_owned_bytes_t *bytes, const char *value) {
    if (value == NULL) return Z_EINVAL;
    return _z_slice_copy(&bytes->_val._s, (const uint8_t *)value, _z_strlen(value));
}
z_result_t z_bytes_from_str(z_owned_bytes_t *bytes, char *value, void (*deleter)(void *value, void *context),
                            void *context) {
    if (value == NULL) return Z_EINVAL;
    return z_bytes_from_buf(bytes, (uint8_t *)value, _z_strlen(value), deleter, context);
}
z_result_t z_bytes_from_static_str(z_owned_bytes_t *bytes, const char *value) {
    if (value == NULL) return Z_EINVAL;
    _z_slice_set_view(&bytes->_val._s, (const uint8_t *)value, _z_strlen(value));
    return Z_OK;
}
z_result_t z_bytes_copy_from_slice(z_owned_bytes_t *bytes, const z_loaned_slice_t *slice) {
    return _z_slice_copy(&bytes->_val._s, slice->_start, slice->_len);
}
z_result_t z_bytes_from_slice(z_owned_bytes_t *bytes, z_moved_slice_t *slice) {
    bytes->_val._s = slice->_this._val;
    _z_slice_null(&slice->_this._val);
    return Z_OK;
}
z_result_t z_bytes_copy_from_string(z_owned_bytes_t *bytes, const z_loaned_string_t *s) {
    return _z_slice_copy(&bytes->_val._s, s->_s._start, s->_s._len);
}
z_result_t z_bytes_from_string(z_owned_bytes_t *bytes, z_moved_string_t *s) {
    bytes->_val._s = s->_this._val._s;
    _z_slice_null(&s->_this._val._s);
    return Z_OK;
}
z_result_t z_bytes_to_string(const z_loaned_bytes_t *bytes, z_owned_string_t *str) {
    return _z_slice_copy(&str->_val._s, bytes->_s._start, bytes->_s._len);
}
z_result_t z_bytes_to_slice(const z_loaned_bytes_t *bytes, z_owned_slice_t *dst) {
    return _z_slice_copy(&dst->_val, bytes->_s._start, bytes->_s._len);
}
z_result_t z_bytes_get_contiguous_view(const z_loaned_bytes_t *bytes, z_view_slice_t *view) {
    _z_slice_set_view(&view->_val, bytes->_s._start, bytes->_s._len);
    return Z_OK;
}
z_result_t z_bytes_clone(z_owned_bytes_t *dst, const z_loaned_bytes_t *src) {
    return _z_slice_copy(&dst->_val._s, src->_s._start, src->_s._len);
}
void z_bytes_empty(z_owned_bytes_t *bytes) { _z_slice_set_view(&bytes->_val._s, NULL, 0); }
size_t z_bytes_len(const z_loaned_bytes_t *bytes) { return bytes->_s._len; }
bool z_bytes_is_empty(const z_loaned_bytes_t *bytes) { return bytes->_s._len == 0; }

z_bytes_reader_t z_bytes_get_reader(const z_loaned_bytes_t *bytes) {
    z_bytes_reader_t r = {bytes, 0};
    return r;
}
size_t z_bytes_reader_read(z_bytes_reader_t *reader, uint8_t *dst, size_t len) {
    size_t left = reader->_bytes->_s._len - reader->_pos;
    size_t n = len < left ? len : left;
    if (n > 0) memcpy(dst, reader->_bytes->_s._start + reader->_pos, n);
    reader->_pos += n;
    return n;
}
size_t z_bytes_reader_remaining(const z_bytes_reader_t *reader) { return reader->_bytes->_s._len - reader->_pos; }
