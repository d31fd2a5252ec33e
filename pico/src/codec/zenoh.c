/*
 * Zenoh (data) messages: Put, Del, Err and Query.
 *
 * Put   |Z|E|T| PUT |  ~ts if T~ ~encoding if E~ ~exts~ ~payload <u8;z32>~
 * Del   |Z|X|T| DEL |  ~ts if T~ ~exts~
 * Err   |Z|E|X| ERR |  ~encoding if E~ ~exts~ ~payload <u8;z32>~
 * Query |Z|P|C|QUERY|  %consolidation if C% ~parameters <utf8;z16> if P~ ~exts~
 */
#include <string.h>

#include "msg.h"

#define _Z_X_SINFO 0x41
#define _Z_X_PUT_ATT 0x43
#define _Z_X_DEL_ATT 0x42
#define _Z_X_QRY_BODY 0x43
#define _Z_X_QRY_ATT 0x45

#if ZP_CODEC_ALL
static z_result_t _z_sinfo_body(_zw_t *w, const void *ctx) { return _z_sinfo_write(w, (const _z_sinfo_t *)ctx); }
#endif

/* The session reads no source info: without ZP_CODEC_ALL it is skipped. */
#define _Z_READ_SINFO ZP_CODEC_ALL

static z_result_t _z_sinfo_from_ext(const _z_ext_t *e, _z_sinfo_t *out) {
    _zr_t sub;
    _zr_init(&sub, e->buf.ptr, e->buf.len);
    return _z_sinfo_read(&sub, out);
}

z_result_t _z_data_read(_zr_t *r, _z_data_t *out) {
    uint8_t h;
    memset(out, 0, sizeof(*out));
    _zr_u8(r, &h);
    out->id = h & _Z_MID_MASK;
    if (out->id != _Z_Z_PUT && out->id != _Z_Z_DEL && out->id != _Z_Z_ERR) return _zr_fail(r);
    if (out->id != _Z_Z_ERR && (h & _Z_FLAG_1)) {
        out->has_ts = true;
        _z_ts_read(r, &out->ts);
    }
    if (out->id != _Z_Z_DEL && (h & _Z_FLAG_2)) {
        out->has_enc = true;
        _z_enc_read(r, &out->enc);
    }
    bool more = (h & _Z_FLAG_Z) != 0;
    while (more) {
        _z_ext_t e;
        _z_ext_read(r, &e, &more);
        uint8_t att = out->id == _Z_Z_PUT ? _Z_X_PUT_ATT : (out->id == _Z_Z_DEL ? _Z_X_DEL_ATT : 0xff);
        if (_Z_READ_SINFO && e.hdr == _Z_X_SINFO) {
            out->has_sinfo = true;
            if (_z_sinfo_from_ext(&e, &out->sinfo) != Z_OK) return _zr_fail(r);
        } else if (e.hdr == att) {
            out->has_att = true;
            out->att = e.buf;
        } else if (_z_ext_keep(&out->kept, &e) != Z_OK) {
            return _zr_fail(r);
        }
    }
    if (out->id != _Z_Z_DEL) _zr_lbytes(r, UINT32_MAX, &out->payload.ptr, &out->payload.len);
    return r->err;
}

z_result_t _z_data_write(_zw_t *w, const _z_data_t *d) {
    uint8_t h = d->id;
    bool att = d->has_att && d->id != _Z_Z_ERR;
    uint8_t n = (uint8_t)(_Z_SENT(d->has_sinfo) + att + _z_kept_n(&d->kept));
    if (d->has_ts && d->id != _Z_Z_ERR) h |= _Z_FLAG_1;
    if (d->has_enc && d->id != _Z_Z_DEL) h |= _Z_FLAG_2;
    if (n > 0) h |= _Z_FLAG_Z;
    _zw_u8(w, h);
    if (h & _Z_FLAG_1) _z_ts_write(w, &d->ts);
    if (h & _Z_FLAG_2) _z_enc_write(w, &d->enc);
    _z_wexts_begin(w, n);
#if ZP_CODEC_ALL
    if (d->has_sinfo) _z_wext_fn(w, _Z_X_SINFO, _z_sinfo_body, &d->sinfo);
#endif
    if (att) _z_wext_buf(w, d->id == _Z_Z_PUT ? _Z_X_PUT_ATT : _Z_X_DEL_ATT, d->att.ptr, d->att.len);
    _z_wext_kept(w, &d->kept);
    if (d->id != _Z_Z_DEL) _zw_lbytes(w, d->payload.ptr, d->payload.len);
    return w->err;
}

/* QueryBody extension: encoding then raw payload up to the end of the body. */
static z_result_t _z_qbody_write(_zw_t *w, const void *ctx) {
    const _z_qmsg_t *q = (const _z_qmsg_t *)ctx;
    _z_enc_write(w, &q->body_enc);
    return _zw_bytes(w, q->body.ptr, q->body.len);
}

z_result_t _z_qmsg_read(_zr_t *r, _z_qmsg_t *out) {
    uint8_t h;
    memset(out, 0, sizeof(*out));
    _zr_u8(r, &h);
    if ((h & _Z_MID_MASK) != _Z_Z_QUERY) return _zr_fail(r);
    if (h & _Z_FLAG_1) {
        uint64_t c;
        out->has_cons = true;
        _zr_zbound(r, UINT8_MAX, &c);
        out->cons = (uint8_t)c;
    }
    if (h & _Z_FLAG_2) {
        const uint8_t *p;
        size_t len;
        _zr_lbytes(r, UINT16_MAX, &p, &len);
        out->params = (const char *)p;
        out->params_len = (uint16_t)len;
    }
    bool more = (h & _Z_FLAG_Z) != 0;
    while (more) {
        _z_ext_t e;
        _z_ext_read(r, &e, &more);
        if (_Z_READ_SINFO && e.hdr == _Z_X_SINFO) {
            out->has_sinfo = true;
            if (_z_sinfo_from_ext(&e, &out->sinfo) != Z_OK) return _zr_fail(r);
        } else if (e.hdr == _Z_X_QRY_BODY) {
            _zr_t sub;
            _zr_init(&sub, e.buf.ptr, e.buf.len);
            out->has_body = true;
            if (_z_enc_read(&sub, &out->body_enc) != Z_OK) return _zr_fail(r);
            out->body.len = _zr_left(&sub);
            out->body.ptr = _zr_here(&sub);
        } else if (e.hdr == _Z_X_QRY_ATT) {
            out->has_att = true;
            out->att = e.buf;
        } else if (_z_ext_keep(&out->kept, &e) != Z_OK) {
            return _zr_fail(r);
        }
    }
    return r->err;
}

z_result_t _z_qmsg_write(_zw_t *w, const _z_qmsg_t *q) {
    uint8_t h = _Z_Z_QUERY;
    uint8_t n = (uint8_t)(_Z_SENT(q->has_sinfo) + q->has_body + q->has_att + _z_kept_n(&q->kept));
    if (q->has_cons) h |= _Z_FLAG_1;
    if (q->params != NULL) h |= _Z_FLAG_2;
    if (n > 0) h |= _Z_FLAG_Z;
    _zw_u8(w, h);
    if (q->has_cons) _zw_zint(w, q->cons);
    if (q->params != NULL) _zw_lbytes(w, (const uint8_t *)q->params, q->params_len);
    _z_wexts_begin(w, n);
#if ZP_CODEC_ALL
    if (q->has_sinfo) _z_wext_fn(w, _Z_X_SINFO, _z_sinfo_body, &q->sinfo);
#endif
    if (q->has_body) _z_wext_fn(w, _Z_X_QRY_BODY, _z_qbody_write, q);
    if (q->has_att) _z_wext_buf(w, _Z_X_QRY_ATT, q->att.ptr, q->att.len);
    return _z_wext_kept(w, &q->kept);
}
