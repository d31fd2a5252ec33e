/*
 * Session dispatch without a network: network messages built with the codec
 * are handed to the session as if received, and the entity tables' callbacks
 * are checked (subscribers, liveliness subscribers, pending gets, liveliness
 * gets, queryables, query timeouts).
 */
#include <string.h>

#include "../src/session/session.h"
#include "test.h"

typedef struct {
    int samples, puts, deletes, replies, errs, drops, queries;
    char key[64];
    size_t payload_len;
    uint16_t enc;
    size_t att_len;
    bool has_ts;
} seen_t;

static seen_t seen;

static void copy_key(const _z_keyexpr_t *k) {
    size_t n = k->_s._len < sizeof(seen.key) - 1 ? k->_s._len : sizeof(seen.key) - 1;
    memcpy(seen.key, k->_s._start, n);
    seen.key[n] = '\0';
}
static void on_sample(z_loaned_sample_t *s, void *ctx) {
    (void)ctx;
    seen.samples++;
    if (s->kind == Z_SAMPLE_KIND_PUT) seen.puts++;
    else seen.deletes++;
    copy_key(&s->keyexpr);
    seen.payload_len = s->payload._s._len;
    seen.enc = s->encoding._id;
    seen.att_len = s->attachment._s._len;
    seen.has_ts = s->timestamp.valid;
}
static void on_reply(z_loaned_reply_t *r, void *ctx) {
    (void)ctx;
    seen.replies++;
    if (!r->_is_ok) seen.errs++;
    else copy_key(&r->_sample.keyexpr);
}
static void on_drop(void *ctx) {
    (void)ctx;
    seen.drops++;
}
static void on_query(z_loaned_query_t *q, void *ctx) {
    (void)ctx;
    seen.queries++;
    copy_key(&q->_key);
}

static _z_session_t *session(void) {
    static _z_session_t *s;
    if (s != NULL) _z_session_free(s);
    s = _z_session_alloc(); /* a clean, unconnected session */
#if Z_FEATURE_MULTI_THREAD == 1
    _z_mutex_init(&s->mtx);
#endif
    memset(&seen, 0, sizeof(seen));
    return s;
}

static void add_sub(_z_session_t *s, int i, uint8_t kind, uint32_t id, const char *key) {
    s->subs[i].used = true;
    s->subs[i].kind = kind;
    s->subs[i].id = id;
    _z_kebuf_set(&s->subs[i].key, key, strlen(key));
    s->subs[i].cb.call = on_sample;
}

static void add_pending(_z_session_t *s, int i, uint8_t kind, uint32_t id, const char *key, bool anyke) {
    _zs_pending_t *p = &s->pending[i];
    p->used = true;
    p->kind = kind;
    p->id = id;
    p->anyke = anyke;
    p->deadline_ms = _z_clock_ms() + 10000;
    _z_kebuf_set(&p->key, key, strlen(key));
    p->cb.call = on_reply;
    p->cb.drop = on_drop;
}

static void key(_z_wexpr_t *w, const char *k) {
    w->scope = 0;
    w->suffix = k;
    w->suffix_len = (uint16_t)strlen(k);
}

static void deliver(_z_session_t *s, const _z_nmsg_t *m) {
    /* through the codec, as a received message would come */
    uint8_t buf[512];
    _zw_t w;
    _zr_t r;
    _z_nmsg_t d;
    _z_rx_info_t info = {true, -1, 5};
    _zw_init(&w, buf, sizeof(buf));
    if (_z_network_encode(&w, m) != Z_OK) return;
    _zr_init(&r, buf, w.pos);
    if (_z_network_decode(&r, &d) != Z_OK) return;
    _z_session_handle(s, &d, &info);
}

static void test_push_to_matching_subscribers(void) {
    _z_session_t *s = session();
    _z_nmsg_t m;
    add_sub(s, 0, _ZS_SUB_DATA, 1, "demo/**");
    add_sub(s, 1, _ZS_SUB_DATA, 2, "other/*");
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_PUSH;
    key(&m.m.push.key, "demo/a/b");
    m.m.push.body.id = _Z_Z_PUT;
    m.m.push.body.payload.ptr = (const uint8_t *)"hello";
    m.m.push.body.payload.len = 5;
    m.m.push.body.has_enc = true;
    m.m.push.body.enc.id = 4;
    m.m.push.body.has_att = true;
    m.m.push.body.att.ptr = (const uint8_t *)"meta";
    m.m.push.body.att.len = 4;
    m.m.push.body.has_ts = true;
    m.m.push.body.ts.time = 42;
    m.m.push.body.ts.id.len = 1;
    m.m.push.body.ts.id.id[0] = 7;
    deliver(s, &m);
    CHECK_EQ(seen.puts, 1);
    CHECK(strcmp(seen.key, "demo/a/b") == 0);
    CHECK_EQ(seen.payload_len, 5);
    CHECK_EQ(seen.enc, 4);
    CHECK_EQ(seen.att_len, 4);
    CHECK(seen.has_ts);
    m.m.push.body.id = _Z_Z_DEL;
    deliver(s, &m);
    CHECK_EQ(seen.deletes, 1);
    /* a key given by an expression id cannot be resolved: dropped */
    m.m.push.key.scope = 3;
    m.m.push.key.suffix = NULL;
    m.m.push.key.suffix_len = 0;
    deliver(s, &m);
    CHECK_EQ(seen.samples, 2);
}

static void test_liveliness_tokens(void) {
    _z_session_t *s = session();
    _z_nmsg_t m;
    add_sub(s, 0, _ZS_SUB_LIVELINESS, 5, "group/**");
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_DECLARE;
    m.m.declare.decl.id = _Z_D_TOKEN;
    m.m.declare.decl.eid = 77;
    key(&m.m.declare.decl.key, "group/node1");
    deliver(s, &m);
    CHECK_EQ(seen.puts, 1);
    CHECK(strcmp(seen.key, "group/node1") == 0);
    /* the undeclaration names only the id (empty WireExpr): the key is remembered */
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_DECLARE;
    m.m.declare.decl.id = _Z_U_TOKEN;
    m.m.declare.decl.eid = 77;
    m.m.declare.decl.has_wire_ext = true;
    deliver(s, &m);
    CHECK_EQ(seen.deletes, 1);
    CHECK(strcmp(seen.key, "group/node1") == 0);
    deliver(s, &m); /* already gone: nothing */
    CHECK_EQ(seen.deletes, 1);
}

static void test_liveliness_get(void) {
    _z_session_t *s = session();
    _z_nmsg_t m;
    add_pending(s, 0, _ZS_PENDING_LIVELINESS, 9, "group/**", false);
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_DECLARE;
    m.m.declare.has_iid = true;
    m.m.declare.iid = 9;
    m.m.declare.decl.id = _Z_D_TOKEN;
    key(&m.m.declare.decl.key, "group/n2");
    deliver(s, &m);
    CHECK_EQ(seen.replies, 1);
    CHECK(strcmp(seen.key, "group/n2") == 0);
    m.m.declare.decl.id = _Z_D_FINAL;
    deliver(s, &m);
    CHECK_EQ(seen.drops, 1);
    CHECK(!s->pending[0].used);
}

static void test_get_replies_and_final(void) {
    _z_session_t *s = session();
    _z_nmsg_t m;
    s->mode = 0;
    add_pending(s, 0, _ZS_PENDING_GET, 3, "demo/q/*", false);
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_RESPONSE;
    m.m.response.rid = 3;
    m.m.response.body_id = _Z_Z_REPLY;
    m.m.response.body.id = _Z_Z_PUT;
    key(&m.m.response.key, "demo/q/a");
    deliver(s, &m);
    CHECK_EQ(seen.replies, 1);
    key(&m.m.response.key, "elsewhere"); /* does not match the query: dropped */
    deliver(s, &m);
    CHECK_EQ(seen.replies, 1);
    m.m.response.rid = 4; /* unknown request id */
    key(&m.m.response.key, "demo/q/a");
    deliver(s, &m);
    CHECK_EQ(seen.replies, 1);
    m.m.response.rid = 3;
    m.m.response.body_id = _Z_Z_ERR;
    m.m.response.body.id = _Z_Z_ERR;
    deliver(s, &m);
    CHECK_EQ(seen.errs, 1);
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_RESPONSE_FINAL;
    m.m.final.rid = 3;
    deliver(s, &m);
    CHECK_EQ(seen.drops, 1);
    CHECK(!s->pending[0].used);
}

static void test_get_timeout(void) {
    _z_session_t *s = session();
    add_pending(s, 0, _ZS_PENDING_GET, 1, "a", false);
    add_pending(s, 1, _ZS_PENDING_GET, 2, "b", false);
    s->pending[0].deadline_ms = _z_clock_ms() - 1;
    _z_session_expire_pending(s, _z_clock_ms());
    CHECK_EQ(seen.drops, 1);
    CHECK(!s->pending[0].used);
    CHECK(s->pending[1].used);
    _z_session_fail_pending(s); /* link lost: every pending get ends */
    CHECK_EQ(seen.drops, 2);
}

static void test_request_to_queryable(void) {
    _z_session_t *s = session();
    _z_nmsg_t m;
    s->qbls[0].used = true;
    _z_kebuf_set(&s->qbls[0].key, "demo/q/**", 9);
    s->qbls[0].cb.call = on_query;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_REQUEST;
    m.m.request.rid = 11;
    key(&m.m.request.key, "demo/q/x");
    m.m.request.query.params = "a=1;_anyke";
    m.m.request.query.params_len = 10;
    deliver(s, &m);
    CHECK_EQ(seen.queries, 1);
    CHECK(strcmp(seen.key, "demo/q/x") == 0);
    key(&m.m.request.key, "demo/other");
    deliver(s, &m);
    CHECK_EQ(seen.queries, 1);
}

#if Z_FEATURE_PUBLICATION == 1
static void test_publisher_key_id_confirmed_by_its_final_only(void) {
    _z_session_t *s = session();
    _z_nmsg_t m;
    _zs_pub_t *e = &s->pubs[0];
    e->used = true;
    e->ke_id = 5;
    e->ke_iid = 77;
    s->link_gen = 3;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_DECLARE;
    m.m.declare.has_iid = true;
    m.m.declare.iid = 78;
    m.m.declare.decl.id = _Z_D_FINAL;
    deliver(s, &m);
    CHECK_EQ(e->ke_gen, 0u); /* another interest's final */
    m.m.declare.has_iid = false;
    m.m.declare.iid = 0;
    deliver(s, &m);
    CHECK_EQ(e->ke_gen, 0u); /* a final for no interest */
    m.m.declare.has_iid = true;
    m.m.declare.iid = 77;
    m.m.declare.decl.id = _Z_D_TOKEN; /* a token answering it comes first */
    key(&m.m.declare.decl.key, "demo/pub");
    deliver(s, &m);
    CHECK_EQ(e->ke_gen, 0u);
    m.m.declare.decl.id = _Z_D_FINAL;
    deliver(s, &m);
    CHECK_EQ(e->ke_gen, 3u); /* confirmed on this link */
    CHECK_EQ(e->ke_iid, 0u);
    s->link_gen = 4; /* a new link: until confirmed again, puts carry the key in full */
    CHECK(e->ke_gen != s->link_gen);
    deliver(s, &m);
    CHECK_EQ(e->ke_gen, 3u); /* the old final again confirms nothing */
}
#endif

TEST_LIST = {
    {"Push reaches matching subscribers only", test_push_to_matching_subscribers},
    {"liveliness token declare / undeclare by id", test_liveliness_tokens},
    {"liveliness get: tokens then DeclareFinal", test_liveliness_get},
    {"get: replies filtered by key and id, final ends it", test_get_replies_and_final},
    {"get: timeout and link loss end pending queries", test_get_timeout},
    {"Request reaches matching queryables", test_request_to_queryable},
#if Z_FEATURE_PUBLICATION == 1
    {"a publisher's key id: confirmed by its interest's final only", test_publisher_key_id_confirmed_by_its_final_only},
#endif
    {NULL, NULL},
};

int main(void) { return test_run_all(test_list); }
