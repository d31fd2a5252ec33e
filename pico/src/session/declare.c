/*
 * Declarations and interests sent by the session, and their replay after a
 * reconnection. Keys are sent in full (scope 0), but for a client's declared
 * publisher, whose puts name its key by an id it declares (once the router has
 * confirmed it); weft-pico never asks for the router's ids (no K bit).
 */
#include <string.h>

#include "session.h"

#define _Z_DECL_QOS 0x08 /* Control priority, block: what 1.x sends */

z_result_t _z_send_declare(_z_session_t *s, uint8_t decl_id, uint32_t eid, const _z_kebuf_t *key, uint64_t qinfo) {
    _z_nmsg_t m;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_DECLARE;
    m.ext.has_qos = true;
    m.ext.qos = _Z_DECL_QOS;
    m.m.declare.decl.id = decl_id;
    m.m.declare.decl.eid = eid;
    if (decl_id == _Z_D_KEYEXPR || decl_id == _Z_D_SUBSCRIBER || decl_id == _Z_D_QUERYABLE || decl_id == _Z_D_TOKEN) {
        _z_wexpr_from_kebuf(&m.m.declare.decl.key, key);
    } else if (decl_id == _Z_U_QUERYABLE || decl_id == _Z_U_TOKEN) {
        m.m.declare.decl.has_wire_ext = true; /* empty WireExpr, as 1.x sends */
    }
    if (decl_id == _Z_D_QUERYABLE && qinfo != 0) {
        m.m.declare.decl.has_qinfo = true;
        m.m.declare.decl.qinfo = qinfo;
    }
    return _z_session_send(s, &m, true, false);
}

z_result_t _z_send_interest(_z_session_t *s, uint8_t mode, uint32_t id, uint8_t options, const _z_kebuf_t *key) {
    _z_nmsg_t m;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_INTEREST;
    m.ext.has_qos = true;
    m.ext.qos = _Z_DECL_QOS;
    m.m.interest.id = id;
    m.m.interest.mode = mode;
    m.m.interest.options = options;
    if (key != NULL) {
        m.m.interest.options |= _Z_IOPT_R;
        _z_wexpr_from_kebuf(&m.m.interest.key, key);
    }
    return _z_session_send(s, &m, true, false);
}

#if _Z_PUB_KEY_IDS
/*
 * A publisher's key by id. The id is declared, then an Interest (mode Current,
 * tokens on the publisher's key) is sent right behind it: the router reads them
 * in order, so its DeclareFinal says the declaration was read. (Tokens, because a
 * Zenoh 1.10.2 router answers nothing, not even DeclareFinal, to a client's
 * Current interest for subscribers, queryables or no kind; the tokens it may
 * send first are no liveliness subscriber's answer, and are ignored.) Until then puts name the key in full: on a lossy link (a frame damaged
 * on a serial line is dropped) a lost declaration would leave every put by id
 * unroutable. Ids count up from 1 and skip the live ones (an id is 16 bits on
 * the wire; entity ids are 32).
 */
void _z_publisher_declare_key(_z_session_t *s, _zs_pub_t *e) {
    e->ke_iid = 0;
    e->ke_gen = 0;
    if (s->mode != 0 || !s->connected) return;
    while (e->ke_id == 0) {
        uint16_t id = ++s->next_ke_id;
        bool taken = id == 0;
        for (unsigned i = 0; !taken && i < ZP_MAX_PUBLISHERS; i++) {
            taken = s->pubs[i].used && s->pubs[i].ke_id == id;
        }
        if (!taken) e->ke_id = id;
    }
    if (_z_send_declare(s, _Z_D_KEYEXPR, e->ke_id, &e->key, 0) != Z_OK) return;
    uint32_t iid = _z_session_new_id(s);
    if (_z_send_interest(s, _Z_INTEREST_CURRENT, iid, _Z_IOPT_T, &e->key) == Z_OK) e->ke_iid = iid;
}

void _z_publisher_confirm_key(_z_session_t *s, uint32_t iid) {
    for (unsigned i = 0; i < ZP_MAX_PUBLISHERS; i++) {
        _zs_pub_t *e = &s->pubs[i];
        if (!e->used || e->ke_iid == 0 || e->ke_iid != iid) continue;
        e->ke_iid = 0;
        e->ke_gen = s->link_gen;
    }
}
#endif

void _z_session_redeclare(_z_session_t *s) {
#if _Z_PUB_KEY_IDS
    for (unsigned i = 0; i < ZP_MAX_PUBLISHERS; i++) {
        if (s->pubs[i].used) _z_publisher_declare_key(s, &s->pubs[i]);
    }
#endif
#if Z_FEATURE_SUBSCRIPTION == 1
    for (unsigned i = 0; i < ZP_MAX_SUBSCRIBERS; i++) {
        _zs_sub_t *e = &s->subs[i];
        if (!e->used) continue;
        if (e->kind == _ZS_SUB_DATA) {
            (void)_z_send_declare(s, _Z_D_SUBSCRIBER, e->id, &e->key, 0);
        } else if (s->mode == 0) {
            (void)_z_send_interest(s, _Z_INTEREST_FUTURE, e->id, _Z_IOPT_T, &e->key);
        }
    }
#endif
#if Z_FEATURE_QUERYABLE == 1
    for (unsigned i = 0; i < ZP_MAX_QUERYABLES; i++) {
        _zs_qbl_t *e = &s->qbls[i];
        if (e->used) (void)_z_send_declare(s, _Z_D_QUERYABLE, e->id, &e->key, e->complete ? 1u : 0u);
    }
#endif
#if Z_FEATURE_LIVELINESS == 1
    for (unsigned i = 0; i < ZP_MAX_TOKENS; i++) {
        _zs_token_t *e = &s->tokens[i];
        if (e->used) (void)_z_send_declare(s, _Z_D_TOKEN, e->id, &e->key, 0);
    }
#endif
    (void)s;
}
