/* Checked reader / bounded writer: the only code that touches raw wire bytes. */
#include "rw.h"

#include <string.h>

z_result_t _zr_fail(_zr_t *r) {
    r->pos = r->len;
    r->err = Z_EDESERIALIZE;
    return Z_EDESERIALIZE;
}

z_result_t _zr_u8(_zr_t *r, uint8_t *out) {
    if (r->pos >= r->len) {
        *out = 0;
        return _zr_fail(r);
    }
    *out = r->p[r->pos++];
    return Z_OK;
}

z_result_t _zr_peek(const _zr_t *r, uint8_t *out) {
    if (r->pos >= r->len) return Z_EDESERIALIZE;
    *out = r->p[r->pos];
    return Z_OK;
}

z_result_t _zr_zint(_zr_t *r, uint64_t *out) {
    uint64_t v = 0;
    unsigned shift = 0;
    *out = 0;
    for (unsigned n = 0; n < 9; n++) {
        uint8_t b;
        _Z_TRY(_zr_u8(r, &b));
        if (n == 8) {
            v |= (uint64_t)b << 56;
            break;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if ((b & 0x80) == 0) break;
    }
    *out = v;
    return Z_OK;
}

z_result_t _zr_zbound(_zr_t *r, uint64_t max, uint64_t *out) {
    _Z_TRY(_zr_zint(r, out));
    if (*out <= max) return Z_OK;
    *out = 0;
    return _zr_fail(r);
}

z_result_t _zr_z16(_zr_t *r, uint16_t *out) {
    uint64_t v;
    z_result_t res = _zr_zbound(r, UINT16_MAX, &v);
    *out = (uint16_t)v;
    return res;
}

z_result_t _zr_z32(_zr_t *r, uint32_t *out) {
    uint64_t v;
    z_result_t res = _zr_zbound(r, UINT32_MAX, &v);
    *out = (uint32_t)v;
    return res;
}

z_result_t _zr_take(_zr_t *r, size_t n, const uint8_t **out) {
    if (n > _zr_left(r)) _zr_fail(r);
    *out = r->p + r->pos; /* failed: at the end, for 0 bytes */
    if (r->err == Z_OK) r->pos += n;
    return r->err;
}

z_result_t _zr_lbytes(_zr_t *r, size_t max, const uint8_t **out, size_t *len) {
    uint64_t n;
    _zr_zint(r, &n);
    if (n > max || n > _zr_left(r)) _zr_fail(r);
    *len = r->err == Z_OK ? (size_t)n : 0;
    return _zr_take(r, *len, out);
}

z_result_t _zr_skip(_zr_t *r, size_t n) {
    const uint8_t *unused;
    return _zr_take(r, n, &unused);
}

z_result_t _zw_u8(_zw_t *w, uint8_t v) {
    if (w->skip == 0 && w->pos < w->cap && w->p != NULL) { /* the common case: a plain buffer with room */
        w->p[w->pos++] = v;
        return Z_OK; /* no error yet: an error leaves pos at the window's end */
    }
    return _zw_bytes(w, &v, 1);
}

z_result_t _zw_zint(_zw_t *w, uint64_t v) {
    unsigned n = 0;
    while (v > 0x7f && n < 8) {
        _zw_u8(w, (uint8_t)((v & 0x7f) | 0x80));
        v >>= 7;
        n++;
    }
    return _zw_u8(w, (uint8_t)v);
}

z_result_t _zw_bytes(_zw_t *w, const uint8_t *src, size_t n) {
    if (w->skip == 0 && w->p != NULL && n <= w->cap - w->pos) { /* pos <= cap always holds */
        if (n > 0) memcpy(w->p + w->pos, src, n);
        w->pos += n;
        return w->err;
    }
    size_t end = w->skip + w->cap; /* first position outside the window */
    if (end < w->skip) end = (size_t)-1; /* counting writer: no limit */
    size_t from = w->pos < w->skip ? w->skip : w->pos;
    size_t to = w->pos + n > end ? end : w->pos + n;
    if (w->p != NULL && to > from) memcpy(w->p + (from - w->skip), src + (from - w->pos), to - from);
    if (w->pos + n > end) { /* pos stays at the end: the fast paths never write again */
        w->pos = end;
        w->err = Z_ENOSPACE;
    } else {
        w->pos += n;
    }
    return w->err;
}

z_result_t _zw_lbytes(_zw_t *w, const uint8_t *src, size_t n) {
    _zw_zint(w, n);
    return _zw_bytes(w, src, n);
}

size_t _z_zint_len(uint64_t v) {
    size_t n = 1;
    while (v > 0x7f && n < 9) {
        v >>= 7;
        n++;
    }
    return n;
}
