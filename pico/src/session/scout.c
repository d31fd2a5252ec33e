/*
 * Scouting: Scouts are multicast on a group (repeated four times within the
 * timeout, datagrams may be lost) and every Hello answering them is handed to
 * a handler. A client with no locator uses it to find a router (first TCP or
 * UDP locator of the first Hello); z_scout reports every node that answers.
 */
#include <string.h>

#include "../api/olv.h"
#include "../mem/text.h"
#include "session.h"

static void _z_hello_null(_z_hello_t *h) { memset(h, 0, sizeof(*h)); }
static bool _z_hello_check(const _z_hello_t *h) { return _z_zid_wire_len(h->_zid.id) > 0; }
static void _z_hello_drop(_z_hello_t *h) { (void)h; }
_ZP_OWNED_IMPL(hello, _z_hello_t, _z_hello_null, _z_hello_check, _z_hello_drop)
static void _z_sarray_null(_z_string_array_t *a) { memset(a, 0, sizeof(*a)); }
static bool _z_sarray_check(const _z_string_array_t *a) { (void)a; return true; }
static void _z_sarray_drop(_z_string_array_t *a) { (void)a; }
_ZP_OWNED_IMPL(string_array, _z_string_array_t, _z_sarray_null, _z_sarray_check, _z_sarray_drop)

z_id_t z_hello_zid(const z_loaned_hello_t *hello) { return hello->_zid; }
z_whatami_t z_hello_whatami(const z_loaned_hello_t *hello) { return hello->_whatami; }
const z_loaned_string_array_t *zp_hello_locators(const z_loaned_hello_t *hello) { return &hello->_locators; }
size_t z_string_array_len(const z_loaned_string_array_t *a) { return a->_len; }
const z_loaned_string_t *z_string_array_get(const z_loaned_string_array_t *a, size_t k) {
    return k < a->_len ? &a->_items[k] : NULL;
}
bool z_string_array_is_empty(const z_loaned_string_array_t *a) { return a->_len == 0; }
z_result_t z_whatami_to_view_string(z_whatami_t whatami, z_view_string_t *str_out) {
    const char *s = whatami == Z_WHATAMI_ROUTER ? "router" : whatami == Z_WHATAMI_PEER ? "peer" : "client";
    if (whatami != Z_WHATAMI_ROUTER && whatami != Z_WHATAMI_PEER && whatami != Z_WHATAMI_CLIENT) return Z_EINVAL;
    return z_view_string_from_str(str_out, s);
}

#if Z_FEATURE_SCOUTING == 1

#define _Z_SCOUT_BUF 512u

/* Called per Hello; returns true to stop scouting. */
typedef bool (*_z_hello_fn)(void *ctx, const _z_hello_t *hello);

static void _z_hello_from(_z_hello_t *h, const _z_smsg_t *m) {
    _zr_t r;
    memset(h, 0, sizeof(*h));
    memcpy(h->_zid.id, m->zid.id, 16);
    h->_whatami = m->what == _Z_WAI_ROUTER ? Z_WHATAMI_ROUTER : m->what == _Z_WAI_PEER ? Z_WHATAMI_PEER : Z_WHATAMI_CLIENT;
    _zr_init(&r, m->locators.ptr, m->locators.len);
    for (uint8_t i = 0; i < m->nloc && h->_locators._len < ZP_HELLO_LOCATORS; i++) {
        const uint8_t *p;
        size_t len;
        if (_zr_lbytes(&r, UINT8_MAX, &p, &len) != Z_OK) break;
        _z_slice_set_view(&h->_locators._items[h->_locators._len++]._s, p, len);
    }
}

static z_result_t _z_scout_run(const char *group, uint8_t what, uint32_t timeout_ms, const _z_zid_t *zid,
                               _z_hello_fn fn, void *ctx) {
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
    m.what = what;
    m.has_zid = zid != NULL;
    if (zid != NULL) m.zid = *zid;
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
            res = _z_net_send(&sock, buf, scout_len);
            next_send = now + (timeout_ms / 4u > 0 ? timeout_ms / 4u : 1u);
            continue;
        }
        uint64_t until = next_send < start + timeout_ms ? next_send : start + timeout_ms;
        uint8_t rx[_Z_SCOUT_BUF];
        int32_t n = _z_net_recv(&sock, rx, sizeof(rx), (uint32_t)(until - now), NULL);
        if (n < 0) res = Z_ETRANSPORT;
        if (n <= 0) continue;
        _zr_t r;
        _z_hello_t hello;
        _zr_init(&r, rx, (size_t)n);
        if (_z_scouting_decode(&r, &m) != Z_OK || m.id != _Z_S_HELLO) continue;
        _z_hello_from(&hello, &m);
        if (fn(ctx, &hello)) break;
    }
    _z_net_close(&sock);
    return res;
}

typedef struct {
    char *out;
    size_t out_len;
} _z_pick_t;

/* Picks the first locator of a Hello that this build can connect to. */
static bool _z_pick_locator(void *ctx, const _z_hello_t *h) {
    _z_pick_t *pick = (_z_pick_t *)ctx;
    for (size_t i = 0; i < h->_locators._len; i++) {
        const _z_slice_t *l = &h->_locators._items[i]._s;
        _z_endpoint_t ep;
        if (l->_len >= pick->out_len) continue;
        memcpy(pick->out, l->_start, l->_len);
        pick->out[l->_len] = '\0';
        if (_z_endpoint_parse(&ep, pick->out) == Z_OK && (ep.kind == _Z_LINK_TCP || ep.kind == _Z_LINK_UDP))
            return true;
    }
    return false;
}

z_result_t _z_scout_locator(const char *group, uint32_t timeout_ms, const _z_zid_t *zid, char *out, size_t out_len) {
    _z_pick_t pick = {out, out_len};
    return _z_scout_run(group, Z_WHAT_ROUTER_PEER, timeout_ms, zid, _z_pick_locator, &pick);
}

/* z_scout: each node once (the Scout is repeated, so are the Hellos). */
typedef struct {
    _z_closure_hello_t cb;
    z_id_t seen[8];
    unsigned nseen;
} _z_scout_ctx_t;

static bool _z_report_hello(void *ctx, const _z_hello_t *h) {
    _z_scout_ctx_t *c = (_z_scout_ctx_t *)ctx;
    for (unsigned i = 0; i < c->nseen; i++)
        if (memcmp(c->seen[i].id, h->_zid.id, 16) == 0) return false;
    if (c->nseen < sizeof(c->seen) / sizeof(c->seen[0])) c->seen[c->nseen++] = h->_zid;
    if (c->cb.call != NULL) c->cb.call((_z_hello_t *)h, c->cb.context);
    return false;
}

void z_scout_options_default(z_scout_options_t *options) {
    options->timeout_ms = 1000;
    options->what = Z_WHAT_ROUTER_PEER;
}

z_result_t z_scout(z_moved_config_t *config, z_moved_closure_hello_t *callback, const z_scout_options_t *options) {
    _z_scout_ctx_t ctx;
    z_scout_options_t o;
    char group[ZP_LOCATOR_CAPACITY];
    memset(&ctx, 0, sizeof(ctx));
    ctx.cb = callback->_this._val;
    memset(&callback->_this._val, 0, sizeof(callback->_this._val));
    if (options != NULL) {
        o = *options;
    } else {
        z_scout_options_default(&o);
    }
    const char *g = config != NULL && config->_this._val._scouting[0] != '\0' ? config->_this._val._scouting
                                                                               : Z_CONFIG_MULTICAST_LOCATOR_DEFAULT;
    memcpy(group, g, _z_strlen(g) + 1);
    z_config_drop(config);
    z_result_t res = _z_scout_run(group, (uint8_t)(o.what & 0x07), o.timeout_ms, NULL, _z_report_hello, &ctx);
    if (ctx.cb.drop != NULL) ctx.cb.drop(ctx.cb.context);
    return res == Z_ETIMEDOUT ? Z_OK : res;
}

#endif
