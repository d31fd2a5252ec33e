/*
 * Declarations (the single body of a Declare network message).
 *
 * D_KEXPR |Z|X|N| 0x00 |  %expr_id:z16% ~wire expr~ ~exts~
 * U_KEXPR |Z|X|X| 0x01 |  %expr_id:z16% ~exts~
 * D_SUB   |Z|M|N| 0x02 |  %id:z32% ~wire expr~ ~exts~
 * U_SUB   |Z|X|X| 0x03 |  %id:z32% ~exts: WireExpr 0x5F~
 * D_QBL   |Z|M|N| 0x04 |  %id:z32% ~wire expr~ ~exts: QueryableInfo 0x21~
 * U_QBL   |Z|X|X| 0x05 |  %id:z32% ~exts: WireExpr 0x5F~
 * D_TKN   |Z|M|N| 0x06 |  %id:z32% ~wire expr~ ~exts~
 * U_TKN   |Z|X|X| 0x07 |  %id:z32% ~exts: WireExpr 0x5F~
 * D_FINAL |Z|X|X| 0x1A |  ~exts~
 *
 * WireExpr extension body: |x..x|M|N| %scope:z16% ~suffix to end of body~
 */
#include <string.h>

#include "msg.h"

#define _Z_X_WIREEXPR 0x5f
#define _Z_X_QINFO 0x21

/* Declarations have the even ids 0..6, their undeclarations the odd ones. */
static bool _z_decl_is_undecl(uint8_t id) { return id <= _Z_U_TOKEN && (id & 1u) != 0 && id != _Z_U_KEYEXPR; }
static bool _z_decl_has_key(uint8_t id) { return id <= _Z_D_TOKEN && (id & 1u) == 0; }

static z_result_t _z_wire_ext_parse(const _z_ext_t *e, _z_wexpr_t *k) {
    _zr_t sub;
    uint8_t f;
    _zr_init(&sub, e->buf.ptr, e->buf.len);
    _zr_u8(&sub, &f);
    _Z_TRY(_zr_z16(&sub, &k->scope));
    k->sender_mapping = (f & 0x02) != 0;
    k->suffix = NULL;
    k->suffix_len = 0;
    if (f & 0x01) {
        if (_zr_left(&sub) > UINT16_MAX) return Z_EDESERIALIZE;
        k->suffix_len = (uint16_t)_zr_left(&sub);
        k->suffix = (const char *)_zr_here(&sub);
    }
    return Z_OK;
}

#if ZP_CODEC_ALL
static z_result_t _z_wire_ext_body(_zw_t *w, const void *ctx) {
    const _z_wexpr_t *k = (const _z_wexpr_t *)ctx;
    _zw_u8(w, (uint8_t)((k->suffix != NULL ? 0x01 : 0) | (k->sender_mapping ? 0x02 : 0)));
    _zw_zint(w, k->scope);
    if (k->suffix != NULL) _zw_bytes(w, (const uint8_t *)k->suffix, k->suffix_len);
    return w->err;
}
#endif

z_result_t _z_decl_read(_zr_t *r, _z_decl_t *out) {
    uint8_t h;
    memset(out, 0, sizeof(*out));
    _zr_u8(r, &h);
    out->id = h & _Z_MID_MASK;
    switch (out->id) {
        case _Z_D_KEYEXPR:
        case _Z_U_KEYEXPR: {
            uint16_t id;
            _zr_z16(r, &id);
            out->eid = id;
            if (out->id == _Z_D_KEYEXPR) _z_wexpr_read(r, (h & _Z_FLAG_1) != 0, false, &out->key);
            break;
        }
        case _Z_D_SUBSCRIBER:
        case _Z_D_QUERYABLE:
        case _Z_D_TOKEN:
            _zr_z32(r, &out->eid);
            _z_wexpr_read(r, (h & _Z_FLAG_1) != 0, (h & _Z_FLAG_2) != 0, &out->key);
            break;
        case _Z_U_SUBSCRIBER:
        case _Z_U_QUERYABLE:
        case _Z_U_TOKEN:
            _zr_z32(r, &out->eid);
            break;
        case _Z_D_FINAL:
            break;
        default:
            return _zr_fail(r);
    }
    bool more = (h & _Z_FLAG_Z) != 0;
    while (more) {
        _z_ext_t e;
        z_result_t res = Z_OK;
        _z_ext_read(r, &e, &more);
        if (e.hdr == _Z_X_WIREEXPR && _z_decl_is_undecl(out->id)) {
            out->has_wire_ext = true; /* mandatory; the session reads undeclarations by id only */
            if (ZP_CODEC_ALL) res = _z_wire_ext_parse(&e, &out->key);
        } else if (e.hdr == _Z_X_QINFO && out->id == _Z_D_QUERYABLE) {
            out->has_qinfo = true;
            out->qinfo = e.z64;
        } else {
            res = _z_ext_keep(&out->kept, &e);
        }
        if (res != Z_OK) return _zr_fail(r);
    }
    return r->err;
}

z_result_t _z_decl_write(_zw_t *w, const _z_decl_t *d) {
    uint8_t h = d->id;
    bool has_key = _z_decl_has_key(d->id);
    bool qinfo = d->has_qinfo && d->id == _Z_D_QUERYABLE;
    bool wire = d->has_wire_ext && _z_decl_is_undecl(d->id);
    uint8_t n = (uint8_t)(qinfo + wire + _z_kept_n(&d->kept));
    if (has_key && d->key.suffix != NULL) h |= _Z_FLAG_1;
    if (has_key && d->id != _Z_D_KEYEXPR && d->key.sender_mapping) h |= _Z_FLAG_2;
    if (n > 0) h |= _Z_FLAG_Z;
    _zw_u8(w, h);
    if (d->id != _Z_D_FINAL) _zw_zint(w, d->eid);
    if (has_key) _z_wexpr_write(w, &d->key);
    _z_wexts_begin(w, n);
    if (qinfo) _z_wext_z64(w, _Z_X_QINFO, d->qinfo);
#if ZP_CODEC_ALL
    if (wire) _z_wext_fn(w, _Z_X_WIREEXPR, _z_wire_ext_body, &d->key);
#else
    static const uint8_t empty[2] = {0, 0}; /* flags, scope 0: the only WireExpr the session sends */
    if (wire) _z_wext_buf(w, _Z_X_WIREEXPR, empty, sizeof(empty));
#endif
    return _z_wext_kept(w, &d->kept);
}
