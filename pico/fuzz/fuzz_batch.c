/*
 * Fuzz target: a whole received batch through the transport (SN rule,
 * fragment reassembly into the bounded buffer) and the session dispatch
 * (subscribers, queryables, pending gets, liveliness), whose callbacks read
 * every byte they are given.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/session/session.h"

static volatile uint32_t sink;

static void touch(const _z_slice_t *s) {
    for (size_t i = 0; i < s->_len; i++) sink += s->_start[i];
}
static void on_sample(z_loaned_sample_t *s, void *ctx) {
    (void)ctx;
    touch(&s->keyexpr._s);
    touch(&s->payload._s);
    touch(&s->attachment._s);
    touch(&s->encoding._schema._s);
}
static void on_query(z_loaned_query_t *q, void *ctx) {
    (void)ctx;
    touch(&q->_key._s);
    touch(&q->_params._s);
    touch(&q->_payload._s);
}
static void on_reply(z_loaned_reply_t *r, void *ctx) {
    (void)ctx;
    if (r->_is_ok) on_sample(&r->_sample, NULL);
    else touch(&r->_err.payload._s);
}

static _z_session_t *setup(void) {
    static _z_session_t *s;
    if (s != NULL) return s;
    s = _z_session_alloc();
    s->mode = 0;
    s->tp.handler = _z_session_handle;
    s->tp.handler_ctx = s;
    s->tp.sn_mask = _z_sn_mask(2);
    s->tp.open = true;
    for (int i = 0; i < 2; i++) {
        s->subs[i].used = true;
        s->subs[i].kind = i == 0 ? _ZS_SUB_DATA : _ZS_SUB_LIVELINESS;
        s->subs[i].id = (uint32_t)i + 1;
        _z_kebuf_set(&s->subs[i].key, "**", 2);
        s->subs[i].cb.call = on_sample;
    }
    s->qbls[0].used = true;
    _z_kebuf_set(&s->qbls[0].key, "**", 2);
    s->qbls[0].cb.call = on_query;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    _z_session_t *s = setup();
    for (uint32_t i = 0; i < 2; i++) {
        _zs_pending_t *p = &s->pending[i];
        p->used = true;
        p->kind = i == 0 ? _ZS_PENDING_GET : _ZS_PENDING_LIVELINESS;
        p->id = 1;
        p->anyke = true;
        p->deadline_ms = (uint64_t)-1;
        _z_kebuf_set(&p->key, "**", 2);
        p->cb.call = on_reply;
    }
    /* SN state accepting anything ahead of 0; every other input with QoS on */
    s->tp.qos = (size & 1u) != 0;
    _z_sn_init(&s->tp, 0, 0);
    (void)_z_rx_batch(&s->tp, data, size, -1, NULL);
    return 0;
}
