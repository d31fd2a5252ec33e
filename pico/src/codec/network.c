/*
 * Network messages (carried in Frames or reassembled from Fragments).
 *
 * Push      |Z|M|N| 0x1D |  ~wire expr~ ~exts~ ~Put|Del~
 * Request   |Z|M|N| 0x1C |  %rid:z32% ~wire expr~ ~exts~ ~Query~
 * Response  |Z|M|N| 0x1B |  %rid:z32% ~wire expr~ ~exts~ ~Reply|Err~
 * ResFinal  |Z|X|X| 0x1A |  %rid:z32% ~exts~
 * Interest  |Z|Mod| 0x19 |  %id:z32% [|options|  ~wire expr if R~]  ~exts~
 * Declare   |Z|X|I| 0x1E |  [%interest id%] ~exts~ ~declaration~
 * OAM       |Z|ENC| 0x1F |  %id:z16% ~exts~ ~body~
 * Reply     |Z|X|C| 0x04 |  [%consolidation%] ~exts~ ~Put|Del~
 *
 * Common extensions, written in this order: QoS 0x21, Timestamp 0x42,
 * (message specific), NodeId 0x33 (mandatory), TsStack 0x47.
 */
#include <string.h>

#include "msg.h"

#define _Z_X_QOS 0x21
#define _Z_X_TS 0x42
#define _Z_X_NODEID 0x33
#define _Z_X_TSSTACK 0x47
#define _Z_X_TARGET 0x34
#define _Z_X_BUDGET 0x25
#define _Z_X_TIMEOUT 0x26
#define _Z_X_RESPONDER 0x43

bool _z_is_network_header(uint8_t b) {
    uint8_t id = b & _Z_MID_MASK;
    return id >= _Z_N_INTEREST && id <= _Z_N_OAM;
}

/* Consumes a common network extension; false if `e` is not one. */
static z_result_t _z_nexts_take(_z_nexts_t *x, const _z_ext_t *e, bool *taken) {
    *taken = true;
    if (e->hdr == _Z_X_QOS) {
        if (e->z64 > 0x7f) return Z_EDESERIALIZE;
        x->has_qos = true;
        x->qos = (uint8_t)e->z64;
#if ZP_CODEC_ALL
    } else if (e->hdr == _Z_X_TS) {
        _zr_t sub;
        _zr_init(&sub, e->buf.ptr, e->buf.len);
        x->has_ts = true;
        return _z_ts_read(&sub, &x->ts);
    } else if (e->hdr == _Z_X_NODEID) {
        if (e->z64 > UINT16_MAX) return Z_EDESERIALIZE;
        x->has_nodeid = true;
        x->nodeid = (uint16_t)e->z64;
    } else if (e->hdr == _Z_X_TSSTACK) {
        x->has_tsstack = true;
        x->tsstack = e->buf;
#else
    } else if (e->hdr == _Z_X_NODEID) { /* mandatory, and of no use to a client: accepted */
#endif
    } else {
        *taken = false; /* a Timestamp or TsStack too without ZP_CODEC_ALL: the session reads neither */
    }
    return Z_OK;
}

#if ZP_CODEC_ALL
static z_result_t _z_ts_body(_zw_t *w, const void *ctx) { return _z_ts_write(w, (const _z_ts_t *)ctx); }

static uint8_t _z_nexts_count(const _z_nexts_t *x) {
    return (uint8_t)(x->has_qos + x->has_ts + x->has_nodeid + x->has_tsstack + _z_kept_n(&x->kept));
}

static z_result_t _z_nexts_head(_zw_t *w, const _z_nexts_t *x) {
    if (x->has_qos) _z_wext_z64(w, _Z_X_QOS, x->qos);
    if (x->has_ts) _z_wext_fn(w, _Z_X_TS, _z_ts_body, &x->ts);
    return w->err;
}

static z_result_t _z_nexts_tail(_zw_t *w, const _z_nexts_t *x) {
    if (x->has_nodeid) _z_wext_z64(w, _Z_X_NODEID, x->nodeid);
    if (x->has_tsstack) _z_wext_buf(w, _Z_X_TSSTACK, x->tsstack.ptr, x->tsstack.len);
    return _z_wext_kept(w, &x->kept);
}
#else
/* The library sends QoS only: no Timestamp, NodeId or TsStack extension. */
#define _z_nexts_count(x) ((uint8_t)(x)->has_qos)
static z_result_t _z_nexts_head(_zw_t *w, const _z_nexts_t *x) {
    if (x->has_qos) _z_wext_z64(w, _Z_X_QOS, x->qos);
    return w->err;
}
#define _z_nexts_tail(w, x) ((void)0)
#endif

/* Reads the extension chain of a network message; `own` handles the
 * message-specific ones (returns Z_EUNSUPPORTED when not its own). */
typedef z_result_t (*_z_own_ext_fn)(_z_nmsg_t *m, const _z_ext_t *e);

static z_result_t _z_nexts_read(_zr_t *r, bool more, _z_nmsg_t *m, _z_own_ext_fn own) {
    while (more) {
        _z_ext_t e;
        bool taken;
        _z_ext_read(r, &e, &more);
        z_result_t res = _z_nexts_take(&m->ext, &e, &taken);
        if (res == Z_OK && !taken) {
            res = own != NULL ? own(m, &e) : Z_EUNSUPPORTED;
            if (res == Z_EUNSUPPORTED) res = _z_ext_keep(&m->ext.kept, &e);
        }
        if (res != Z_OK) return _zr_fail(r);
    }
    return r->err;
}

#if ZP_CODEC_ALL
static z_result_t _z_request_ext(_z_nmsg_t *m, const _z_ext_t *e) {
    if (e->hdr == _Z_X_TARGET) {
        if (e->z64 > 2) return Z_EDESERIALIZE;
        m->m.request.has_target = true;
        m->m.request.target = (uint8_t)e->z64;
    } else if (e->hdr == _Z_X_BUDGET) {
        if (e->z64 > UINT32_MAX) return Z_EDESERIALIZE;
        m->m.request.has_budget = true;
        m->m.request.budget = (uint32_t)e->z64;
    } else if (e->hdr == _Z_X_TIMEOUT) {
        m->m.request.has_timeout = true;
        m->m.request.timeout = e->z64;
    } else {
        return Z_EUNSUPPORTED;
    }
    return Z_OK;
}
#else
/* A queryable reads none of them: the target (mandatory) is accepted, the others skipped. */
static z_result_t _z_request_ext(_z_nmsg_t *m, const _z_ext_t *e) {
    (void)m;
    return e->hdr == _Z_X_TARGET ? Z_OK : Z_EUNSUPPORTED;
}
#endif

static z_result_t _z_response_ext(_z_nmsg_t *m, const _z_ext_t *e) {
    if (e->hdr != _Z_X_RESPONDER) return Z_EUNSUPPORTED;
    _zr_t sub;
    uint8_t f;
    _zr_init(&sub, e->buf.ptr, e->buf.len);
    _zr_u8(&sub, &f);
    _z_zid_read(&sub, (uint8_t)((f >> 4) + 1), &m->m.response.rzid);
    _zr_z32(&sub, &m->m.response.reid);
    m->m.response.has_responder = true;
    return sub.err;
}

#if _Z_ENC_RESPONSE && ZP_CODEC_ALL
static z_result_t _z_responder_body(_zw_t *w, const void *ctx) {
    const _z_nmsg_t *m = (const _z_nmsg_t *)ctx;
    _zw_u8(w, (uint8_t)((m->m.response.rzid.len - 1) << 4));
    _zw_bytes(w, m->m.response.rzid.id, m->m.response.rzid.len);
    return _zw_zint(w, m->m.response.reid);
}
#endif

static z_result_t _z_response_body_read(_zr_t *r, _z_nmsg_t *m) {
    uint8_t h;
    if (_zr_peek(r, &h) != Z_OK) return _zr_fail(r);
    m->m.response.body_id = h & _Z_MID_MASK;
    if (m->m.response.body_id == _Z_Z_ERR) return _z_data_read(r, &m->m.response.body);
    if (m->m.response.body_id != _Z_Z_REPLY) return _zr_fail(r);
    _zr_skip(r, 1);
    if (h & _Z_FLAG_1) {
        uint64_t c;
        m->m.response.has_cons = true;
        _zr_zbound(r, UINT8_MAX, &c);
        m->m.response.cons = (uint8_t)c;
    }
    bool more = (h & _Z_FLAG_Z) != 0;
    while (more) {
        _z_ext_t e;
        _z_ext_read(r, &e, &more);
        if (_z_ext_keep(&m->m.response.reply_kept, &e) != Z_OK) return _zr_fail(r);
    }
    _z_data_read(r, &m->m.response.body);
    return m->m.response.body.id == _Z_Z_ERR ? _zr_fail(r) : r->err;
}

/* What the network messages have in common is read in one place: an id
 * (request, interest or declaration interest), a wire expression, the
 * extension chain; then what follows it. */
z_result_t _z_network_decode(_zr_t *r, _z_nmsg_t *m) {
    uint8_t h;
    uint32_t *rid = NULL;
    _z_wexpr_t *key = NULL;
    _z_own_ext_fn own = NULL;
    memset(m, 0, sizeof(*m));
    _zr_u8(r, &h); /* failed: id 0, no network message */
    m->id = h & _Z_MID_MASK;
    bool n = (h & _Z_FLAG_1) != 0, mp = (h & _Z_FLAG_2) != 0;
    switch (m->id) {
        case _Z_N_PUSH:
            key = &m->m.push.key;
            break;
        case _Z_N_REQUEST:
            rid = &m->m.request.rid;
            key = &m->m.request.key;
            own = _z_request_ext;
            break;
        case _Z_N_RESPONSE:
            rid = &m->m.response.rid;
            key = &m->m.response.key;
            own = _z_response_ext;
            break;
        case _Z_N_RESPONSE_FINAL:
            rid = &m->m.final.rid;
            break;
        case _Z_N_INTEREST:
            rid = &m->m.interest.id;
            m->m.interest.mode = (uint8_t)((h >> 5) & 0x03);
            break;
        case _Z_N_DECLARE:
            m->m.declare.has_iid = n;
            if (n) rid = &m->m.declare.iid;
            break;
        case _Z_N_OAM:
            m->m.oam.enc = h & _Z_EXT_ENC_MASK;
            _zr_z16(r, &m->m.oam.oam_id);
            break;
        default:
            return _zr_fail(r);
    }
    if (rid != NULL) _zr_z32(r, rid);
    if (key != NULL) _z_wexpr_read(r, n, mp, key);
    if (m->id == _Z_N_INTEREST && m->m.interest.mode != _Z_INTEREST_FINAL) {
        uint8_t o;
        _zr_u8(r, &o);
        m->m.interest.options = o;
        if (o & _Z_IOPT_R) _z_wexpr_read(r, (o & _Z_IOPT_N) != 0, (o & _Z_IOPT_M) != 0, &m->m.interest.key);
    }
    _z_nexts_read(r, (h & _Z_FLAG_Z) != 0, m, own);
    switch (m->id) {
        case _Z_N_PUSH:
            _z_data_read(r, &m->m.push.body);
            return m->m.push.body.id == _Z_Z_ERR ? _zr_fail(r) : r->err;
        case _Z_N_REQUEST:
            return _z_qmsg_read(r, &m->m.request.query);
        case _Z_N_RESPONSE:
            return _z_response_body_read(r, m);
        case _Z_N_DECLARE:
            return _z_decl_read(r, &m->m.declare.decl);
        case _Z_N_OAM:
            if (m->m.oam.enc == _Z_EXT_Z64) return _zr_zint(r, &m->m.oam.z64);
            if (m->m.oam.enc == _Z_EXT_ZBUF) return _zr_lbytes(r, UINT32_MAX, &m->m.oam.body.ptr, &m->m.oam.body.len);
            return m->m.oam.enc == _Z_EXT_UNIT ? r->err : _zr_fail(r);
        default:
            return r->err;
    }
}

static uint8_t _z_key_flags(const _z_wexpr_t *k) {
    return (uint8_t)((k->suffix != NULL ? _Z_FLAG_1 : 0) | (k->sender_mapping ? _Z_FLAG_2 : 0));
}

#if _Z_ENC_RESPONSE
static z_result_t _z_reply_write(_zw_t *w, const _z_nmsg_t *m) {
    if (m->m.response.body_id == _Z_Z_ERR) return _z_data_write(w, &m->m.response.body);
    uint8_t n = (uint8_t)_z_kept_n(&m->m.response.reply_kept);
    bool cons = _Z_SENT(m->m.response.has_cons);
    uint8_t h = _Z_Z_REPLY | (cons ? _Z_FLAG_1 : 0) | (n > 0 ? _Z_FLAG_Z : 0);
    _zw_u8(w, h);
    if (cons) _zw_zint(w, m->m.response.cons);
    _z_wexts_begin(w, n);
    _z_wext_kept(w, &m->m.response.reply_kept);
    return _z_data_write(w, &m->m.response.body);
}
#endif

/* The message's own extensions, between the common head and tail ones. */
static z_result_t _z_network_own_exts(_zw_t *w, const _z_nmsg_t *m) {
#if _Z_ENC_REQUEST
    if (m->id == _Z_N_REQUEST) {
        if (m->m.request.has_target) _z_wext_z64(w, _Z_X_TARGET, m->m.request.target);
        if (_Z_SENT(m->m.request.has_budget)) _z_wext_z64(w, _Z_X_BUDGET, m->m.request.budget);
        if (m->m.request.has_timeout) _z_wext_z64(w, _Z_X_TIMEOUT, m->m.request.timeout);
    }
#endif
#if _Z_ENC_RESPONSE && ZP_CODEC_ALL
    if (m->id == _Z_N_RESPONSE && m->m.response.has_responder)
        _z_wext_fn(w, _Z_X_RESPONDER, _z_responder_body, m);
#endif
    (void)w;
    (void)m;
    return w->err;
}

/* What follows the extensions. */
static z_result_t _z_network_body(_zw_t *w, const _z_nmsg_t *m) {
    switch (m->id) {
        case _Z_N_PUSH:
            return _z_data_write(w, &m->m.push.body);
#if _Z_ENC_REQUEST
        case _Z_N_REQUEST:
            return _z_qmsg_write(w, &m->m.request.query);
#endif
#if _Z_ENC_RESPONSE
        case _Z_N_RESPONSE:
            return _z_reply_write(w, m);
#endif
#if _Z_ENC_DECLARE
        case _Z_N_DECLARE:
            return _z_decl_write(w, &m->m.declare.decl);
#endif
#if ZP_CODEC_ALL
        case _Z_N_OAM:
            if (m->m.oam.enc == _Z_EXT_Z64) return _zw_zint(w, m->m.oam.z64);
            if (m->m.oam.enc == _Z_EXT_ZBUF) return _zw_lbytes(w, m->m.oam.body.ptr, m->m.oam.body.len);
            return w->err;
#endif
        default:
            return w->err;
    }
}

#if _Z_ENC_INTEREST
/* An Interest's options and wire expression (N and M as the expression has them). */
static void _z_interest_write(_zw_t *w, const _z_nmsg_t *m) {
    if (m->m.interest.mode == _Z_INTEREST_FINAL) return;
    uint8_t o = m->m.interest.options;
    if (o & _Z_IOPT_R) {
        o = (uint8_t)(o & ~(_Z_IOPT_N | _Z_IOPT_M));
        if (m->m.interest.key.suffix != NULL) o |= _Z_IOPT_N;
        if (m->m.interest.key.sender_mapping) o |= _Z_IOPT_M;
    }
    _zw_u8(w, o);
    if (o & _Z_IOPT_R) _z_wexpr_write(w, &m->m.interest.key);
}
#endif

/* As the decoder: the id, the wire expression and the extension chain that
 * network messages have in common are written in one place. */
z_result_t _z_network_encode(_zw_t *w, const _z_nmsg_t *m) {
    const uint32_t *rid = NULL;
    const _z_wexpr_t *key = NULL;
    uint8_t h = m->id, n = 0; /* n: the message's own extensions */
    if (!_z_enc_enabled(m->id)) return Z_EUNSUPPORTED;
    switch (m->id) {
        case _Z_N_PUSH:
            key = &m->m.push.key;
            break;
#if _Z_ENC_REQUEST
        case _Z_N_REQUEST:
            rid = &m->m.request.rid;
            key = &m->m.request.key;
            n = (uint8_t)(m->m.request.has_target + _Z_SENT(m->m.request.has_budget) + m->m.request.has_timeout);
            break;
#endif
#if _Z_ENC_RESPONSE
        case _Z_N_RESPONSE:
            rid = &m->m.response.rid;
            key = &m->m.response.key;
            n = _Z_SENT(m->m.response.has_responder);
            break;
        case _Z_N_RESPONSE_FINAL:
            rid = &m->m.final.rid;
            break;
#endif
#if _Z_ENC_INTEREST
        case _Z_N_INTEREST:
            rid = &m->m.interest.id;
            h = (uint8_t)(h | (m->m.interest.mode << 5));
            break;
#endif
#if _Z_ENC_DECLARE
        case _Z_N_DECLARE:
            if (m->m.declare.has_iid) {
                rid = &m->m.declare.iid;
                h |= _Z_FLAG_1;
            }
            break;
#endif
#if ZP_CODEC_ALL
        case _Z_N_OAM:
            h |= m->m.oam.enc;
            break;
#endif
        default:
            return Z_EINVAL;
    }
    if (key != NULL) h |= _z_key_flags(key);
    n = (uint8_t)(n + _z_nexts_count(&m->ext));
    _zw_u8(w, n > 0 ? (uint8_t)(h | _Z_FLAG_Z) : h);
#if ZP_CODEC_ALL
    if (m->id == _Z_N_OAM) _zw_zint(w, m->m.oam.oam_id);
#endif
    if (rid != NULL) _zw_zint(w, *rid);
    if (key != NULL) _z_wexpr_write(w, key);
#if _Z_ENC_INTEREST
    if (m->id == _Z_N_INTEREST) _z_interest_write(w, m);
#endif
    _z_wexts_begin(w, n);
    _z_nexts_head(w, &m->ext);
    _z_network_own_exts(w, m);
    _z_nexts_tail(w, &m->ext);
    return _z_network_body(w, m);
}
