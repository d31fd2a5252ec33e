/*
 * Declarations and interests sent by the session, and their replay after a
 * reconnection. Keys are always sent in full (scope 0): weft-pico never
 * declares key-expression ids, and never asks for the router's (no K bit).
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
    if (decl_id == _Z_D_SUBSCRIBER || decl_id == _Z_D_QUERYABLE || decl_id == _Z_D_TOKEN) {
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

void _z_session_redeclare(_z_session_t *s) {
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
