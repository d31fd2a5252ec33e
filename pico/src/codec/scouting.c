/*
 * Scouting messages (one per UDP datagram, no batch).
 *
 * Scout |Z|X|X| 0x01 |  |version| |zid_len|I|what| [~zid~ if I]  ~exts~
 * Hello |Z|X|L| 0x02 |  |version| |zid_len|X|X|wai| ~zid~ [%n% n x <utf8;z8> if L] ~exts~
 *
 * `what` is the role bitmask (router 1, peer 2, client 4); `wai` the 2-bit
 * role code. I (0x08) tells that a zid follows the Scout.
 */
#include <string.h>

#include "msg.h"

#define _Z_SCOUT_I 0x08

z_result_t _z_scouting_decode(_zr_t *r, _z_smsg_t *m) {
    uint8_t h, v, f;
    memset(m, 0, sizeof(*m));
    _Z_TRY(_zr_u8(r, &h));
    m->id = h & _Z_MID_MASK;
    if (m->id != _Z_S_SCOUT && m->id != _Z_S_HELLO) return Z_EDESERIALIZE;
    _Z_TRY(_zr_u8(r, &v));
    if (v != Z_PROTO_VERSION_BYTE) return Z_EDESERIALIZE;
    _Z_TRY(_zr_u8(r, &f));
    if (m->id == _Z_S_SCOUT) {
        m->what = f & 0x07;
        m->has_zid = (f & _Z_SCOUT_I) != 0;
    } else {
        m->what = f & 0x03;
        m->has_zid = true;
        if (m->what > _Z_WAI_CLIENT) return Z_EDESERIALIZE;
    }
    if (m->has_zid) _Z_TRY(_z_zid_read(r, (uint8_t)((f >> 4) + 1), &m->zid));
    if (m->id == _Z_S_HELLO && (h & _Z_FLAG_1)) {
        uint64_t n;
        size_t start;
        m->has_locators = true;
        _Z_TRY(_zr_zbound(r, UINT8_MAX, &n));
        m->nloc = (uint8_t)n;
        start = r->pos;
        for (uint64_t i = 0; i < n; i++) {
            const uint8_t *p;
            size_t len;
            _Z_TRY(_zr_lbytes(r, UINT8_MAX, &p, &len));
        }
        m->locators.ptr = r->p + start;
        m->locators.len = r->pos - start;
    }
    bool more = (h & _Z_FLAG_Z) != 0;
    while (more) {
        _z_ext_t e;
        _Z_TRY(_z_ext_read(r, &e, &more));
        _Z_TRY(_z_ext_keep(&m->kept, &e));
    }
    return Z_OK;
}

z_result_t _z_scouting_encode(_zw_t *w, const _z_smsg_t *m) {
    uint8_t h = m->id, f;
    uint8_t n = (uint8_t)_z_kept_n(&m->kept);
    if (m->id == _Z_S_HELLO && m->has_locators) h |= _Z_FLAG_1;
    if (n > 0) h |= _Z_FLAG_Z;
    if (m->id == _Z_S_SCOUT) {
        f = (uint8_t)((m->what & 0x07) | (m->has_zid ? _Z_SCOUT_I | ((m->zid.len - 1) << 4) : 0));
    } else {
        f = (uint8_t)((m->what & 0x03) | ((m->zid.len - 1) << 4));
    }
    _zw_u8(w, h);
    _zw_u8(w, Z_PROTO_VERSION_BYTE);
    _zw_u8(w, f);
    if (m->has_zid) _zw_bytes(w, m->zid.id, m->zid.len);
    if (h & _Z_FLAG_1) {
        _zw_zint(w, m->nloc);
        _zw_bytes(w, m->locators.ptr, m->locators.len);
    }
    _z_wexts_begin(w, n);
    return _z_wext_kept(w, &m->kept);
}
