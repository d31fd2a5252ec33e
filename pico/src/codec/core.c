/*
 * Core wire types: ZenohID, timestamp, encoding, wire expression, source
 * info, and the extension TLV chain shared by every message family.
 */
#include <string.h>

#include "msg.h"

/* ZenohID: `len` raw little-endian bytes (len comes from a nibble or a zint). */
z_result_t _z_zid_read(_zr_t *r, uint8_t len, _z_zid_t *out) {
    const uint8_t *p;
    if (len < 1 || len > 16) return _zr_fail(r);
    _Z_TRY(_zr_take(r, len, &p)); /* before the copy */
    memset(out->id, 0, sizeof(out->id));
    memcpy(out->id, p, len);
    out->len = len;
    return Z_OK;
}

/* Significant length of a 128-bit little-endian id (0 for the all-zero id). */
uint8_t _z_zid_wire_len(const uint8_t id[16]) {
    uint8_t n = 16;
    while (n > 0 && id[n - 1] == 0) n--;
    return n;
}

/*
 * Timestamp
 * %  time: NTP64 as zint  %
 * %  zid length (1..16)   %
 * ~  zid bytes            ~
 */
z_result_t _z_ts_read(_zr_t *r, _z_ts_t *out) {
    uint64_t n;
    _zr_zint(r, &out->time);
    _zr_zint(r, &n);
    return _z_zid_read(r, n <= 16 ? (uint8_t)n : 0, &out->id);
}

z_result_t _z_ts_write(_zw_t *w, const _z_ts_t *ts) {
    _zw_zint(w, ts->time);
    return _zw_lbytes(w, ts->id.id, ts->id.len);
}

/*
 * Encoding
 * %  (id << 1) | S  %   z32, id fits u16
 * ~  schema <u8;z8> ~   if S
 */
z_result_t _z_enc_read(_zr_t *r, _z_enc_t *out) {
    uint32_t v;
    size_t len = 0;
    _zr_z32(r, &v);
    if ((v >> 1) > UINT16_MAX) return _zr_fail(r);
    out->id = (uint16_t)(v >> 1);
    out->has_schema = (v & 1) != 0;
    out->schema = NULL;
    out->schema_len = 0;
    if (out->has_schema) {
        _zr_lbytes(r, UINT8_MAX, &out->schema, &len);
        out->schema_len = (uint8_t)len;
    }
    return r->err;
}

z_result_t _z_enc_write(_zw_t *w, const _z_enc_t *e) {
    _zw_zint(w, ((uint64_t)e->id << 1) | (e->has_schema ? 1u : 0u));
    if (e->has_schema) _zw_lbytes(w, e->schema, e->schema_len);
    return w->err;
}

bool _z_enc_is_default(const _z_enc_t *e) { return e->id == 0 && !e->has_schema; }

/*
 * Wire expression
 * % key_scope:z16 %
 * ~ key_suffix    ~  <utf8;z16> if the message's N flag is set
 */
z_result_t _z_wexpr_read(_zr_t *r, bool has_suffix, bool sender, _z_wexpr_t *out) {
    _zr_z16(r, &out->scope);
    out->sender_mapping = sender;
    out->suffix = NULL;
    out->suffix_len = 0;
    if (has_suffix) {
        const uint8_t *p;
        size_t len;
        _zr_lbytes(r, UINT16_MAX, &p, &len);
        out->suffix = (const char *)p;
        out->suffix_len = (uint16_t)len;
    }
    return r->err;
}

z_result_t _z_wexpr_write(_zw_t *w, const _z_wexpr_t *k) {
    _zw_zint(w, k->scope);
    if (k->suffix != NULL) _zw_lbytes(w, (const uint8_t *)k->suffix, k->suffix_len);
    return w->err;
}

/*
 * SourceInfo / ResponderId body
 * |zid_len-1|xxxx|  ~zid~  %eid:z32%  [%sn:z32%]
 */
z_result_t _z_sinfo_read(_zr_t *r, _z_sinfo_t *out) {
    uint8_t f;
    _zr_u8(r, &f);
    _z_zid_read(r, (uint8_t)((f >> 4) + 1), &out->zid);
    _zr_z32(r, &out->eid);
    return _zr_z32(r, &out->sn);
}

z_result_t _z_sinfo_write(_zw_t *w, const _z_sinfo_t *s) {
    _zw_u8(w, (uint8_t)((s->zid.len - 1) << 4));
    _zw_bytes(w, s->zid.id, s->zid.len);
    _zw_zint(w, s->eid);
    return _zw_zint(w, s->sn);
}

/* ---- extension chain ---- */

z_result_t _z_ext_read(_zr_t *r, _z_ext_t *e, bool *more) {
    uint8_t h;
    _zr_u8(r, &h); /* failed: h is 0, no more extension */
    *more = (h & _Z_FLAG_Z) != 0;
    e->hdr = h & 0x7f;
    e->z64 = 0;
    e->buf.ptr = NULL;
    e->buf.len = 0;
    switch (h & _Z_EXT_ENC_MASK) {
        case _Z_EXT_UNIT:
            return r->err;
        case _Z_EXT_Z64:
            return _zr_zint(r, &e->z64);
        case _Z_EXT_ZBUF:
            return _zr_lbytes(r, UINT32_MAX, &e->buf.ptr, &e->buf.len);
        default:
            return _zr_fail(r);
    }
}

z_result_t _z_ext_keep(_z_exts_t *kept, const _z_ext_t *e) {
    if (e->hdr & _Z_EXT_M) return Z_EDESERIALIZE; /* unknown mandatory */
#if _Z_KEEP_EXTS
    if (kept->n < _Z_KEPT_EXTS) kept->e[kept->n++] = *e;
#else
    (void)kept;
#endif
    return Z_OK;
}

static z_result_t _z_wext_hdr(_zw_t *w, uint8_t hdr) {
    w->exts--;
    return _zw_u8(w, (uint8_t)(hdr | (w->exts > 0 ? _Z_FLAG_Z : 0)));
}

z_result_t _z_wext_z64(_zw_t *w, uint8_t hdr, uint64_t v) {
    _z_wext_hdr(w, hdr);
    return (hdr & _Z_EXT_ENC_MASK) == _Z_EXT_Z64 ? _zw_zint(w, v) : w->err;
}

z_result_t _z_wext_buf(_zw_t *w, uint8_t hdr, const uint8_t *p, size_t len) {
    _z_wext_hdr(w, hdr);
    return _zw_lbytes(w, p, len);
}

z_result_t _z_wext_fn(_zw_t *w, uint8_t hdr, _z_body_fn fn, const void *ctx) {
    _zw_t c;
    _zw_counter(&c);
    _Z_TRY(fn(&c, ctx));
    _z_wext_hdr(w, hdr);
    _zw_zint(w, c.pos);
    return fn(w, ctx);
}

#if _Z_KEEP_EXTS
z_result_t _z_wext_kept(_zw_t *w, const _z_exts_t *kept) {
    for (uint8_t i = 0; i < kept->n; i++) {
        const _z_ext_t *e = &kept->e[i];
        if ((e->hdr & _Z_EXT_ENC_MASK) == _Z_EXT_ZBUF) {
            _z_wext_buf(w, e->hdr, e->buf.ptr, e->buf.len);
        } else {
            _z_wext_z64(w, e->hdr, e->z64);
        }
    }
    return w->err;
}
#endif
