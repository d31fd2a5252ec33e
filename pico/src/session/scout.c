/*
 * Client scouting: with no locator configured, a client multicasts a Scout
 * (what = router | peer) and connects to the first TCP or UDP locator of the
 * first Hello that answers within the scouting timeout.
 */
#include <string.h>

#include "session.h"

#if Z_FEATURE_SCOUTING == 1

#define _Z_SCOUT_WHAT 0x03 /* router | peer */
#define _Z_SCOUT_BUF 512u

/* Picks the first locator of a Hello that this build can connect to. */
static bool _z_hello_locator(const _z_smsg_t *h, char *out, size_t out_len) {
    _zr_t r;
    _zr_init(&r, h->locators.ptr, h->locators.len);
    for (uint8_t i = 0; i < h->nloc; i++) {
        const uint8_t *p;
        size_t len;
        _z_endpoint_t ep;
        if (_zr_lbytes(&r, UINT8_MAX, &p, &len) != Z_OK || len >= out_len) return false;
        memcpy(out, p, len);
        out[len] = '\0';
        if (_z_endpoint_parse(&ep, out) == Z_OK && (ep.kind == _Z_LINK_TCP || ep.kind == _Z_LINK_UDP)) return true;
    }
    return false;
}

z_result_t _z_scout_locator(const char *group, uint32_t timeout_ms, const _z_zid_t *zid, char *out, size_t out_len) {
    _z_endpoint_t ep;
    _z_sys_socket_t sock;
    _z_smsg_t m;
    _zw_t w;
    uint8_t buf[_Z_SCOUT_BUF];
    _Z_TRY(_z_endpoint_parse(&ep, group));
    if (ep.kind != _Z_LINK_UDP_MULTICAST) return Z_ECONFIG;
    ep.kind = _Z_LINK_UDP_SCOUT;
    _Z_TRY(_z_net_open(&sock, &ep));
    memset(&m, 0, sizeof(m));
    m.id = _Z_S_SCOUT;
    m.what = _Z_SCOUT_WHAT;
    m.has_zid = true;
    m.zid = *zid;
    _zw_init(&w, buf, sizeof(buf));
    z_result_t res = _z_scouting_encode(&w, &m);
    size_t scout_len = w.pos;
    uint64_t start = _z_clock_ms(), next_send = start;
    while (res == Z_OK) {
        uint64_t now = _z_clock_ms();
        if (now - start >= timeout_ms) {
            res = Z_ETIMEDOUT;
            break;
        }
        if (now >= next_send) {
            /* datagrams may be lost: repeat the Scout a few times */
            res = _z_net_send(&sock, buf, scout_len);
            next_send = now + (timeout_ms / 4u > 0 ? timeout_ms / 4u : 1u);
            continue;
        }
        uint8_t rx[_Z_SCOUT_BUF];
        int32_t n = _z_net_recv(&sock, rx, sizeof(rx), (uint32_t)(next_send - now), NULL);
        if (n < 0) res = Z_ETRANSPORT;
        if (n <= 0) continue;
        _zr_t r;
        _zr_init(&r, rx, (size_t)n);
        if (_z_scouting_decode(&r, &m) == Z_OK && m.id == _Z_S_HELLO && m.has_locators &&
            _z_hello_locator(&m, out, out_len))
            break;
    }
    _z_net_close(&sock);
    return res;
}

#endif
