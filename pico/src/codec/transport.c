/*
 * Transport messages (the content of a batch).
 *
 * Init     |Z|S|A| 0x01 |  |ver| |zid_len|x|x|wai| ~zid~ [|res| |batch u16 LE|]
 *                          [~cookie <u8;z16>~ if A] ~exts~
 * Open     |Z|T|A| 0x02 |  %lease% %initial sn% [~cookie~ if !A] ~exts~
 * Close    |Z|X|S| 0x03 |  |reason| ~exts~
 * KeepAlive|Z|X|X| 0x04 |  ~exts~
 * Frame    |Z|X|R| 0x05 |  %sn% ~exts~ [network messages...]
 * Fragment |Z|M|R| 0x06 |  %sn% ~exts~ ~payload to the end of the batch~
 * Join     |Z|S|T| 0x07 |  |ver| |zid_len|x|x|wai| ~zid~ [|res| |batch|] %lease%
 *                          %next sn reliable% %next sn best effort% ~exts~
 * OAM      |Z|ENC| 0x00 |  %id:z16% ~exts~ ~body~
 */
#include <string.h>

#include "msg.h"

/* Init / Open extensions */
#define _Z_X_QOS 0x01
#define _Z_X_QOSLINK 0x21
#define _Z_X_SHM 0x42
#define _Z_X_AUTH 0x43
#define _Z_X_MLINK 0x44
#define _Z_X_MLINK_ACK 0x04
#define _Z_X_LOWLAT 0x05
#define _Z_X_COMPRESS 0x06
#define _Z_X_PATCH 0x27
#define _Z_X_REGION 0x48
#define _Z_X_REMOTE_BOUND 0x27
/* Frame / Fragment / OAM */
#define _Z_X_FQOS 0x31
#define _Z_X_FIRST 0x02
#define _Z_X_DROP 0x03
/* Join */
#define _Z_X_JQOS 0x51
#define _Z_X_JSHM 0x52

bool _z_frame_more(const _zr_t *r) {
    uint8_t b;
    return _zr_peek(r, &b) == Z_OK && _z_is_network_header(b);
}

/* |version| |zid_len|x|x|wai| ~zid~ */
static z_result_t _z_ident_read(_zr_t *r, uint8_t *wai, _z_zid_t *zid) {
    uint8_t v, f;
    _zr_u8(r, &v);
    if (v != Z_PROTO_VERSION_BYTE) return _zr_fail(r);
    _zr_u8(r, &f);
    *wai = f & 0x03;
    if (*wai > _Z_WAI_CLIENT) return _zr_fail(r);
    return _z_zid_read(r, (uint8_t)((f >> 4) + 1), zid);
}

#if _Z_ENC_JOIN /* with ZP_CODEC_ALL or multicast: the Init the library sends is written by unicast.c */
static z_result_t _z_ident_write(_zw_t *w, uint8_t wai, const _z_zid_t *zid) {
    _zw_u8(w, Z_PROTO_VERSION_BYTE);
    _zw_u8(w, (uint8_t)(((zid->len - 1) << 4) | (wai & 0x03)));
    return _zw_bytes(w, zid->id, zid->len);
}
#endif

static z_result_t _z_size_read(_zr_t *r, uint8_t *res, uint16_t *batch) {
    const uint8_t *p;
    _zr_u8(r, res);
    *res &= 0x3f;
    _Z_TRY(_zr_take(r, 2, &p)); /* before reading p */
    *batch = (uint16_t)(p[0] | (p[1] << 8));
    return Z_OK;
}

#if _Z_ENC_JOIN
static z_result_t _z_size_write(_zw_t *w, uint8_t res, uint16_t batch) {
    _zw_u8(w, res);
    _zw_u8(w, (uint8_t)(batch & 0xff));
    return _zw_u8(w, (uint8_t)(batch >> 8));
}
#endif

static z_result_t _z_other_ext(_z_tmsg_t *m, const _z_ext_t *e) { return _z_ext_keep(&m->kept, e); }

#if ZP_CODEC_ALL || Z_FEATURE_QOS
static z_result_t _z_init_ext(_z_tmsg_t *m, const _z_ext_t *e) {
    switch (e->hdr) {
        case _Z_X_QOS: m->m.init.qos = true; break;
        case _Z_X_QOSLINK: m->m.init.has_qoslink = true; m->m.init.qoslink = e->z64; break;
#if ZP_CODEC_ALL
        case _Z_X_SHM: m->m.init.has_shm = true; m->m.init.shm = e->buf; break;
        case _Z_X_AUTH: m->m.init.has_auth = true; m->m.init.auth = e->buf; break;
        case _Z_X_MLINK: m->m.init.has_mlink = true; m->m.init.mlink = e->buf; break;
        case _Z_X_LOWLAT: m->m.init.lowlatency = true; break;
        case _Z_X_COMPRESS: m->m.init.compression = true; break;
        case _Z_X_PATCH: m->m.init.has_patch = true; m->m.init.patch = e->z64; break;
        case _Z_X_REGION: m->m.init.has_region = true; m->m.init.region = e->buf; break;
#endif
        default: return _z_ext_keep(&m->kept, e);
    }
    return Z_OK;
}
#else
#define _z_init_ext _z_other_ext /* the handshake reads no extension of InitAck */
#endif

#if ZP_CODEC_ALL
static z_result_t _z_open_ext(_z_tmsg_t *m, const _z_ext_t *e) {
    switch (e->hdr) {
        case _Z_X_QOS: m->m.open.qos = true; break;
        case _Z_X_SHM: m->m.open.has_shm = true; m->m.open.shm = e->buf; break;
        case _Z_X_AUTH: m->m.open.has_auth = true; m->m.open.auth = e->buf; break;
        case _Z_X_MLINK: m->m.open.has_mlink = true; m->m.open.mlink = e->buf; break;
        case _Z_X_MLINK_ACK: m->m.open.mlink_ack = true; break;
        case _Z_X_LOWLAT: m->m.open.lowlatency = true; break;
        case _Z_X_COMPRESS: m->m.open.compression = true; break;
        case _Z_X_REMOTE_BOUND: m->m.open.has_remote_bound = true; m->m.open.remote_bound = e->z64; break;
        default: return _z_ext_keep(&m->kept, e);
    }
    return Z_OK;
}

static z_result_t _z_join_ext(_z_tmsg_t *m, const _z_ext_t *e) {
    if (e->hdr == _Z_X_JQOS) {
        m->m.join.has_qos_sns = true;
        m->m.join.qos_sns = e->buf;
    } else if (e->hdr == _Z_X_JSHM) {
        m->m.join.has_shm = true;
        m->m.join.shm = e->buf;
    } else if (e->hdr == _Z_X_PATCH) {
        m->m.join.has_patch = true;
        m->m.join.patch = e->z64;
    } else {
        return _z_ext_keep(&m->kept, e);
    }
    return Z_OK;
}

static z_result_t _z_oam_ext(_z_tmsg_t *m, const _z_ext_t *e) {
    if (e->hdr != _Z_X_FQOS) return _z_ext_keep(&m->kept, e);
    m->m.oam.has_qos = true;
    m->m.oam.qos = e->z64;
    return Z_OK;
}
#else
/* the library reads no extension of OpenAck, Join or OAM */
#define _z_open_ext _z_other_ext
#define _z_join_ext _z_other_ext
#define _z_oam_ext _z_other_ext
#endif

static z_result_t _z_frame_ext(_z_tmsg_t *m, const _z_ext_t *e) {
    if (e->hdr == _Z_X_FQOS) {
        m->m.frame.has_qos = true;
        m->m.frame.qos = e->z64;
    } else if (e->hdr == _Z_X_FIRST && m->id == _Z_T_FRAGMENT) {
        m->m.frame.first = true;
    } else if (e->hdr == _Z_X_DROP && m->id == _Z_T_FRAGMENT) {
        m->m.frame.drop = true;
    } else {
        return _z_ext_keep(&m->kept, e);
    }
    return Z_OK;
}

typedef z_result_t (*_z_text_fn)(_z_tmsg_t *m, const _z_ext_t *e);

static z_result_t _z_texts_read(_zr_t *r, uint8_t h, _z_tmsg_t *m, _z_text_fn fn) {
    bool more = (h & _Z_FLAG_Z) != 0;
    while (more) {
        _z_ext_t e;
        _z_ext_read(r, &e, &more);
        if (fn(m, &e) != Z_OK) return _zr_fail(r);
    }
    return r->err;
}

/* Each reader below takes the rest of a message whose header byte h was read. */
static z_result_t _z_init_read(_zr_t *r, uint8_t h, _z_tmsg_t *m) {
    m->m.init.ack = (h & _Z_FLAG_1) != 0;
    _z_ident_read(r, &m->m.init.whatami, &m->m.init.zid);
    m->m.init.resolution = 0x0a;
    m->m.init.batch_size = 65535;
    if (h & _Z_FLAG_2) {
        m->m.init.has_size = true;
        _z_size_read(r, &m->m.init.resolution, &m->m.init.batch_size);
    }
    if (m->m.init.ack) _zr_lbytes(r, UINT16_MAX, &m->m.init.cookie.ptr, &m->m.init.cookie.len);
    return _z_texts_read(r, h, m, _z_init_ext);
}

static z_result_t _z_open_read(_zr_t *r, uint8_t h, _z_tmsg_t *m) {
    m->m.open.ack = (h & _Z_FLAG_1) != 0;
    m->m.open.lease_in_s = (h & _Z_FLAG_2) != 0;
    _zr_zint(r, &m->m.open.lease);
    _zr_zint(r, &m->m.open.initial_sn);
    if (!m->m.open.ack) _zr_lbytes(r, UINT16_MAX, &m->m.open.cookie.ptr, &m->m.open.cookie.len);
    return _z_texts_read(r, h, m, _z_open_ext);
}

static z_result_t _z_frame_read(_zr_t *r, uint8_t h, _z_tmsg_t *m) {
    m->m.frame.reliable = (h & _Z_FLAG_1) != 0;
    m->m.frame.more = m->id == _Z_T_FRAGMENT && (h & _Z_FLAG_2) != 0;
    _zr_zint(r, &m->m.frame.sn);
    _z_texts_read(r, h, m, _z_frame_ext);
    if (m->id != _Z_T_FRAGMENT) return r->err;
    m->m.frame.payload.len = _zr_left(r);
    return _zr_take(r, m->m.frame.payload.len, &m->m.frame.payload.ptr);
}

/* A unicast link never carries a Join: only a multicast or a ZP_CODEC_ALL build reads one. */
#define _Z_DEC_JOIN (ZP_CODEC_ALL || Z_FEATURE_MULTICAST_TRANSPORT)

#if _Z_DEC_JOIN
static z_result_t _z_join_read(_zr_t *r, uint8_t h, _z_tmsg_t *m) {
    m->m.join.version = Z_PROTO_VERSION_BYTE;
    _z_ident_read(r, &m->m.join.whatami, &m->m.join.zid);
    m->m.join.resolution = 0x0a;
    m->m.join.batch_size = 8192;
    if (h & _Z_FLAG_2) {
        m->m.join.has_size = true;
        _z_size_read(r, &m->m.join.resolution, &m->m.join.batch_size);
    }
    m->m.join.lease_in_s = (h & _Z_FLAG_1) != 0;
    _zr_zint(r, &m->m.join.lease);
    _zr_zint(r, &m->m.join.next_sn_r);
    _zr_zint(r, &m->m.join.next_sn_be);
    return _z_texts_read(r, h, m, _z_join_ext);
}
#endif

static z_result_t _z_oam_read(_zr_t *r, uint8_t h, _z_tmsg_t *m) {
    m->m.oam.enc = h & _Z_EXT_ENC_MASK;
    _zr_z16(r, &m->m.oam.oam_id);
    _z_texts_read(r, h, m, _z_oam_ext);
    if (m->m.oam.enc == _Z_EXT_Z64) return _zr_zint(r, &m->m.oam.z64);
    if (m->m.oam.enc == _Z_EXT_ZBUF) return _zr_lbytes(r, UINT32_MAX, &m->m.oam.body.ptr, &m->m.oam.body.len);
    return m->m.oam.enc == _Z_EXT_UNIT ? r->err : _zr_fail(r);
}

/* Clears m and reads a message's header byte (*h, m->id); an Init or an Open
 * is read whole, any other message is left to the caller after its header. */
static z_result_t _z_tmsg_start(_zr_t *r, _z_tmsg_t *m, uint8_t *h) {
    memset(m, 0, sizeof(*m));
    _Z_TRY(_zr_u8(r, h));
    m->id = *h & _Z_MID_MASK;
    if (m->id == _Z_T_INIT) return _z_init_read(r, *h, m);
    if (m->id == _Z_T_OPEN) return _z_open_read(r, *h, m);
    return r->err;
}

z_result_t _z_transport_decode(_zr_t *r, _z_tmsg_t *m) {
    uint8_t h;
    _Z_TRY(_z_tmsg_start(r, m, &h));
    switch (m->id) {
        case _Z_T_INIT:
        case _Z_T_OPEN:
            return Z_OK;
        case _Z_T_CLOSE:
            m->m.close.session = (h & _Z_FLAG_1) != 0;
            _zr_u8(r, &m->m.close.reason);
            return _z_texts_read(r, h, m, _z_other_ext);
        case _Z_T_KEEPALIVE:
            return _z_texts_read(r, h, m, _z_other_ext);
        case _Z_T_FRAME:
        case _Z_T_FRAGMENT:
            return _z_frame_read(r, h, m);
#if _Z_DEC_JOIN
        case _Z_T_JOIN:
            return _z_join_read(r, h, m);
#endif
        case _Z_T_OAM:
            return _z_oam_read(r, h, m);
        default:
            return _zr_fail(r);
    }
}

z_result_t _z_handshake_decode(_zr_t *r, _z_tmsg_t *m) {
    uint8_t h;
    _Z_TRY(_z_tmsg_start(r, m, &h));
    return m->id == _Z_T_INIT || m->id == _Z_T_OPEN ? Z_OK : Z_EOPEN;
}

/* A Fragment's field: only a build that fragments sends one. */
#if _Z_ENC_FRAGMENT
#define _Z_FRAG_SENT(flag) (flag)
#else
#define _Z_FRAG_SENT(flag) false
#endif

#if ZP_CODEC_ALL
static uint8_t _z_init_nexts(const _z_tmsg_t *m) {
    return (uint8_t)(m->m.init.qos + m->m.init.has_qoslink + m->m.init.has_shm + m->m.init.has_auth +
                     m->m.init.has_mlink + m->m.init.lowlatency + m->m.init.compression + m->m.init.has_patch +
                     m->m.init.has_region);
}

static z_result_t _z_init_wexts(_zw_t *w, const _z_tmsg_t *m) {
    if (m->m.init.qos) _z_wext_z64(w, _Z_X_QOS, 0);
    if (m->m.init.has_qoslink) _z_wext_z64(w, _Z_X_QOSLINK, m->m.init.qoslink);
    if (m->m.init.has_shm) _z_wext_buf(w, _Z_X_SHM, m->m.init.shm.ptr, m->m.init.shm.len);
    if (m->m.init.has_auth) _z_wext_buf(w, _Z_X_AUTH, m->m.init.auth.ptr, m->m.init.auth.len);
    if (m->m.init.has_mlink) _z_wext_buf(w, _Z_X_MLINK, m->m.init.mlink.ptr, m->m.init.mlink.len);
    if (m->m.init.lowlatency) _z_wext_z64(w, _Z_X_LOWLAT, 0);
    if (m->m.init.compression) _z_wext_z64(w, _Z_X_COMPRESS, 0);
    if (m->m.init.has_patch) _z_wext_z64(w, _Z_X_PATCH, m->m.init.patch);
    if (m->m.init.has_region) _z_wext_buf(w, _Z_X_REGION, m->m.init.region.ptr, m->m.init.region.len);
    return w->err;
}

static uint8_t _z_open_nexts(const _z_tmsg_t *m) {
    return (uint8_t)(m->m.open.qos + m->m.open.has_shm + m->m.open.has_auth + m->m.open.has_mlink +
                     m->m.open.mlink_ack + m->m.open.lowlatency + m->m.open.compression + m->m.open.has_remote_bound);
}

static z_result_t _z_open_wexts(_zw_t *w, const _z_tmsg_t *m) {
    if (m->m.open.qos) _z_wext_z64(w, _Z_X_QOS, 0);
    if (m->m.open.has_shm) _z_wext_buf(w, _Z_X_SHM, m->m.open.shm.ptr, m->m.open.shm.len);
    if (m->m.open.has_auth) _z_wext_buf(w, _Z_X_AUTH, m->m.open.auth.ptr, m->m.open.auth.len);
    if (m->m.open.has_mlink) _z_wext_buf(w, _Z_X_MLINK, m->m.open.mlink.ptr, m->m.open.mlink.len);
    if (m->m.open.mlink_ack) _z_wext_z64(w, _Z_X_MLINK_ACK, 0);
    if (m->m.open.lowlatency) _z_wext_z64(w, _Z_X_LOWLAT, 0);
    if (m->m.open.compression) _z_wext_z64(w, _Z_X_COMPRESS, 0);
    if (m->m.open.has_remote_bound) _z_wext_z64(w, _Z_X_REMOTE_BOUND, m->m.open.remote_bound);
    return w->err;
}
#endif

/* The header byte of a transport message and, in w->exts, how many extensions
 * follow; _Z_T_NONE (no transport message has all flags and id 0x1f) when this
 * build does not encode it. */
#define _Z_T_NONE 0xffu
static uint8_t _z_transport_header(_zw_t *w, const _z_tmsg_t *m) {
    uint8_t h = m->id;
    uint8_t n = (uint8_t)_z_kept_n(&m->kept);
    switch (m->id) {
#if ZP_CODEC_ALL
        case _Z_T_INIT:
            n = (uint8_t)(n + _z_init_nexts(m));
            if (m->m.init.ack) h |= _Z_FLAG_1;
            if (m->m.init.has_size) h |= _Z_FLAG_2;
            break;
        case _Z_T_OPEN:
            n = (uint8_t)(n + _z_open_nexts(m));
            if (m->m.open.ack) h |= _Z_FLAG_1;
            if (m->m.open.lease_in_s) h |= _Z_FLAG_2;
            break;
        case _Z_T_CLOSE:
            if (m->m.close.session) h |= _Z_FLAG_1;
            break;
        case _Z_T_KEEPALIVE:
            break;
#endif
        case _Z_T_FRAME:
#if _Z_ENC_FRAGMENT
        case _Z_T_FRAGMENT:
#endif
            n = (uint8_t)(n + m->m.frame.has_qos + _Z_FRAG_SENT(m->m.frame.first) + _Z_SENT(m->m.frame.drop));
            if (m->m.frame.reliable) h |= _Z_FLAG_1;
            if (_Z_FRAG_SENT(m->m.frame.more)) h |= _Z_FLAG_2;
            break;
#if _Z_ENC_JOIN
        case _Z_T_JOIN:
            n = (uint8_t)(n + m->m.join.has_qos_sns + m->m.join.has_shm + m->m.join.has_patch);
            if (m->m.join.lease_in_s) h |= _Z_FLAG_1;
            if (m->m.join.has_size) h |= _Z_FLAG_2;
            break;
#endif
#if ZP_CODEC_ALL
        case _Z_T_OAM:
            n = (uint8_t)(n + m->m.oam.has_qos);
            h |= m->m.oam.enc;
            break;
#endif
        default:
            return _Z_T_NONE;
    }
    _z_wexts_begin(w, n);
    return n > 0 ? (uint8_t)(h | _Z_FLAG_Z) : h;
}

z_result_t _z_transport_encode(_zw_t *w, const _z_tmsg_t *m) {
    uint8_t h = _z_transport_header(w, m);
    if (h == _Z_T_NONE) return Z_EINVAL;
    _zw_u8(w, h);
    switch (m->id) {
#if ZP_CODEC_ALL
        case _Z_T_INIT:
            _z_ident_write(w, m->m.init.whatami, &m->m.init.zid);
            if (m->m.init.has_size) _z_size_write(w, m->m.init.resolution, m->m.init.batch_size);
            if (m->m.init.ack) _zw_lbytes(w, m->m.init.cookie.ptr, m->m.init.cookie.len);
            _z_init_wexts(w, m);
            break;
        case _Z_T_OPEN:
            _zw_zint(w, m->m.open.lease);
            _zw_zint(w, m->m.open.initial_sn);
            if (!m->m.open.ack) _zw_lbytes(w, m->m.open.cookie.ptr, m->m.open.cookie.len);
            _z_open_wexts(w, m);
            break;
        case _Z_T_CLOSE:
            _zw_u8(w, m->m.close.reason);
            break;
#endif
        case _Z_T_FRAME:
        case _Z_T_FRAGMENT:
            _zw_zint(w, m->m.frame.sn);
            if (m->m.frame.has_qos) _z_wext_z64(w, _Z_X_FQOS, m->m.frame.qos);
            if (_Z_FRAG_SENT(m->m.frame.first)) _z_wext_z64(w, _Z_X_FIRST, 0);
            if (_Z_SENT(m->m.frame.drop)) _z_wext_z64(w, _Z_X_DROP, 0);
            break;
#if _Z_ENC_JOIN
        case _Z_T_JOIN:
            _z_ident_write(w, m->m.join.whatami, &m->m.join.zid);
            if (m->m.join.has_size) _z_size_write(w, m->m.join.resolution, m->m.join.batch_size);
            _zw_zint(w, m->m.join.lease);
            _zw_zint(w, m->m.join.next_sn_r);
            _zw_zint(w, m->m.join.next_sn_be);
            if (m->m.join.has_qos_sns) _z_wext_buf(w, _Z_X_JQOS, m->m.join.qos_sns.ptr, m->m.join.qos_sns.len);
            if (m->m.join.has_shm) _z_wext_buf(w, _Z_X_JSHM, m->m.join.shm.ptr, m->m.join.shm.len);
            if (m->m.join.has_patch) _z_wext_z64(w, _Z_X_PATCH, m->m.join.patch);
            break;
#endif
#if ZP_CODEC_ALL
        case _Z_T_OAM:
            _zw_zint(w, m->m.oam.oam_id);
            if (m->m.oam.has_qos) _z_wext_z64(w, _Z_X_FQOS, m->m.oam.qos);
            break;
#endif
        default:
            break;
    }
    _z_wext_kept(w, &m->kept);
    if (_Z_ENC_FRAGMENT && m->id == _Z_T_FRAGMENT) _zw_bytes(w, m->m.frame.payload.ptr, m->m.frame.payload.len);
#if ZP_CODEC_ALL
    if (m->id == _Z_T_OAM) {
        if (m->m.oam.enc == _Z_EXT_Z64) return _zw_zint(w, m->m.oam.z64);
        if (m->m.oam.enc == _Z_EXT_ZBUF) return _zw_lbytes(w, m->m.oam.body.ptr, m->m.oam.body.len);
    }
#endif
    return w->err;
}
