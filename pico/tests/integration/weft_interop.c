/*
 * The weft-pico side of the integration tests. One program, one role per
 * run (driven by run_interop.py against a real Zenoh router):
 *
 *   weft_interop [--st] ROLE LOCATOR KEY [ARGS...]
 *
 *   pub KEY COUNT SIZE      publisher: COUNT puts of SIZE bytes, then a delete
 *   put KEY SIZE            one z_put with encoding and attachment
 *   sub KEY COUNT MS        prints samples; exit 0 after COUNT, 1 on timeout
 *   get KEY EXPECT MS       prints replies; exit 0 if EXPECT replies then final
 *   querier KEY EXPECT MS   a querier and two gets through it
 *   aqueryable KEY MS       keeps each query (z_query_clone) and replies later
 *   queryable KEY MS        answers queries on KEY ("reply:<params>"; "err" key -> reply_err)
 *   token KEY MS            holds a liveliness token for MS ms
 *   lsub KEY COUNT MS       liveliness subscriber; exit 0 after COUNT events
 *   lget KEY EXPECT MS      liveliness get
 *   batch KEY COUNT         COUNT puts inside zp_batch_start/stop
 *   burst KEY COUNT EXPRESS COUNT puts of 10 bytes as fast as possible (BLOCK), express or not
 *   prio KEY COUNT          COUNT rounds of one put on KEY/p at priority p, p = 1..7
 *                           (the second half batched: several priorities per batch)
 *   drop KEY MS             DROP puts on KEY while the link is stalled, then BLOCK puts on KEY/block
 *                           until one has waited 500 ms
 *   reconnect KEY COUNT MS  subscriber that must keep receiving across a router restart
 *   pubrc KEY MS            publisher: a put every 50 ms for MS ms, across router restarts;
 *                           prints "PUB KEY BY ID n" each time its puts begin to name the key
 *                           by the id it declared (n-th time: once per link)
 *   scout GROUP MS          (no session) z_scout on GROUP; exit 0 if a node answered
 *
 * LOCATOR "scout:udp/GROUP:PORT#iface=X": no locator, the router is found by scouting.
 * --st: single-threaded run model (no tasks; zp_spin_once loop).
 * Payload byte i of message n is (i + n) & 0xff; samples are checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zenoh-pico.h"
/* only to report whether QoS was negotiated */
#include "../../src/session/session.h"

/* without threads the application always drives the session */
static bool single_thread = Z_FEATURE_MULTI_THREAD == 0;
static z_owned_session_t session;
/* shared with the read task: accessed atomically */
static int events = 0;
static int errors = 0;
static bool finished = false;
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define BUMP(x) __atomic_add_fetch(&(x), 1, __ATOMIC_SEQ_CST)

static void fill(uint8_t *p, size_t n, int seq) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)((i + (size_t)seq) & 0xff);
}

static bool check_pattern(const z_loaned_bytes_t *b) {
    size_t n = z_bytes_len(b);
    z_bytes_reader_t r = z_bytes_get_reader(b);
    uint8_t first = 0, x;
    for (size_t i = 0; i < n; i++) {
        if (z_bytes_reader_read(&r, &x, 1) != 1) return false;
        if (i == 0) first = x;
        if (x != (uint8_t)((first + i) & 0xff)) return false;
    }
    return true;
}

/* Waits up to ms for `done`, driving the session in single-thread mode. */
static void wait_for(int ms, bool *done) {
    z_clock_t start = z_clock_now();
    while ((done == NULL || !LOAD(*done)) && (int)z_clock_elapsed_ms(&start) < ms) {
        if (single_thread) {
            zp_spin_once(z_session_loan(&session));
        } else {
            z_sleep_ms(10);
        }
    }
}

/* "scout:GROUP" means: no locator, find the router by scouting on GROUP. */
static void configure(z_owned_config_t *config, const char *locator) {
    z_config_default(config);
    if (strncmp(locator, "scout:", 6) == 0) {
        zp_config_insert(z_config_loan_mut(config), Z_CONFIG_MULTICAST_LOCATOR_KEY, locator + 6);
        zp_config_insert(z_config_loan_mut(config), Z_CONFIG_SCOUTING_TIMEOUT_KEY, "3000");
        return;
    }
    zp_config_insert(z_config_loan_mut(config), Z_CONFIG_MODE_KEY,
                     strncmp(locator, "udp/2", 5) == 0 ? "peer" : "client");
    zp_config_insert(z_config_loan_mut(config), Z_CONFIG_CONNECT_KEY, locator);
}

static int open_session(const char *locator) {
    z_owned_config_t config;
    z_open_options_t opts;
    configure(&config, locator);
    z_open_options_default(&opts);
#if Z_FEATURE_MULTI_THREAD == 1
    opts.auto_start_read_task = !single_thread;
    opts.auto_start_lease_task = !single_thread;
#endif
    for (int attempt = 0; attempt < 50; attempt++) {
        if (z_open(&session, z_config_move(&config), &opts) == Z_OK) {
            printf("OPEN qos=%d\n", (int)z_session_loan(&session)->_s->tp.qos);
            fflush(stdout);
            return 0;
        }
        z_sleep_ms(100);
        configure(&config, locator);
    }
    printf("OPEN FAILED\n");
    return 1;
}

static void on_sample(z_loaned_sample_t *sample, void *ctx) {
    (void)ctx;
    z_view_string_t key;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &key);
    const z_loaned_bytes_t *p = z_sample_payload(sample);
    bool ok = z_sample_kind(sample) == Z_SAMPLE_KIND_DELETE || check_pattern(p);
    const z_loaned_bytes_t *att = z_sample_attachment(sample);
    printf("SAMPLE %s %.*s len=%zu enc=%u att=%zu %s prio=%d\n",
           z_sample_kind(sample) == Z_SAMPLE_KIND_PUT ? "PUT" : "DELETE", (int)z_string_len(z_view_string_loan(&key)),
           z_string_data(z_view_string_loan(&key)), z_bytes_len(p), (unsigned)z_sample_encoding(sample)->_id,
           att != NULL ? z_bytes_len(att) : 0, ok ? "ok" : "CORRUPT", (int)z_sample_priority(sample));
    fflush(stdout);
    if (!ok) BUMP(errors);
    BUMP(events);
}

static void on_reply(z_loaned_reply_t *reply, void *ctx) {
    (void)ctx;
    if (z_reply_is_ok(reply)) {
        const z_loaned_sample_t *s = z_reply_ok(reply);
        z_view_string_t key;
        z_owned_string_t text;
        z_keyexpr_as_view_string(z_sample_keyexpr(s), &key);
        z_bytes_to_string(z_sample_payload(s), &text);
        printf("REPLY %.*s '%.*s'\n", (int)z_string_len(z_view_string_loan(&key)),
               z_string_data(z_view_string_loan(&key)), (int)z_string_len(z_string_loan(&text)),
               z_string_data(z_string_loan(&text)));
        z_string_drop(z_string_move(&text));
    } else {
        z_owned_string_t text;
        z_bytes_to_string(z_reply_err_payload(z_reply_err(reply)), &text);
        printf("REPLY_ERR '%.*s'\n", (int)z_string_len(z_string_loan(&text)), z_string_data(z_string_loan(&text)));
        z_string_drop(z_string_move(&text));
    }
    fflush(stdout);
    BUMP(events);
}

static void on_reply_done(void *ctx) {
    (void)ctx;
    printf("FINAL\n");
    fflush(stdout);
    __atomic_store_n(&finished, true, __ATOMIC_SEQ_CST);
}

static void on_query(z_loaned_query_t *query, void *ctx) {
    (void)ctx;
    z_view_string_t key, params;
    char text[128];
    z_keyexpr_as_view_string(z_query_keyexpr(query), &key);
    z_query_parameters(query, &params);
    printf("QUERY %.*s '%.*s' payload=%zu\n", (int)z_string_len(z_view_string_loan(&key)),
           z_string_data(z_view_string_loan(&key)), (int)z_string_len(z_view_string_loan(&params)),
           z_string_data(z_view_string_loan(&params)), z_bytes_len(z_query_payload(query)));
    fflush(stdout);
    BUMP(events);
    z_owned_bytes_t payload;
    if (z_string_len(z_view_string_loan(&key)) >= 3 &&
        strncmp(z_string_data(z_view_string_loan(&key)) + z_string_len(z_view_string_loan(&key)) - 3, "err", 3) ==
            0) {
        z_bytes_copy_from_str(&payload, "oops");
        z_query_reply_err(query, z_bytes_move(&payload), NULL);
        return;
    }
    snprintf(text, sizeof(text), "reply:%.*s", (int)z_string_len(z_view_string_loan(&params)),
             z_string_data(z_view_string_loan(&params)));
    z_bytes_copy_from_str(&payload, text);
    z_query_reply(query, z_query_keyexpr(query), z_bytes_move(&payload), NULL);
}

/* Whether the publisher's puts name its key by the id it declared (the router
 * confirmed the declaration on the current link). */
static bool pub_by_id(const z_owned_publisher_t *pub) {
    _z_session_t *s = pub->_val._s;
    _z_session_lock(s);
    const _zs_pub_t *e = &s->pubs[pub->_val._slot];
    bool by_id = e->used && e->ke_id != 0 && e->ke_gen != 0 && e->ke_gen == s->link_gen;
    _z_session_unlock(s);
    return by_id;
}

static int role_pubrc(const char *key, int ms) {
    z_view_keyexpr_t ke;
    z_owned_publisher_t pub;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    if (z_declare_publisher(z_session_loan(&session), &pub, z_view_keyexpr_loan(&ke), NULL) != Z_OK) return 3;
    z_clock_t start = z_clock_now();
    int confirmed = 0, n = 0;
    bool was_by_id = false;
    while ((int)z_clock_elapsed_ms(&start) < ms) {
        bool by_id = pub_by_id(&pub);
        if (by_id && !was_by_id) printf("PUB KEY BY ID %d\n", ++confirmed);
        was_by_id = by_id;
        char value[32];
        snprintf(value, sizeof(value), "n=%d", n++);
        z_owned_bytes_t payload;
        z_bytes_copy_from_str(&payload, value);
        (void)z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), NULL); /* fails while away */
        wait_for(50, NULL);
    }
    printf("PUB DONE %d\n", n);
    z_publisher_drop(z_publisher_move(&pub));
    return confirmed > 0 ? 0 : 5;
}

static int role_pub(const char *key, int count, int size) {
    z_view_keyexpr_t ke;
    z_owned_publisher_t pub;
    z_publisher_options_t opts;
    static uint8_t buf[70000];
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK || size > (int)sizeof(buf)) return 2;
    z_publisher_options_default(&opts);
    opts.priority = Z_PRIORITY_DATA_HIGH;
    opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    if (z_declare_publisher(z_session_loan(&session), &pub, z_view_keyexpr_loan(&ke), &opts) != Z_OK) return 3;
    wait_for(300, NULL);
    printf("PUB KEY %s\n", pub_by_id(&pub) ? "BY ID" : "IN FULL");
    for (int n = 0; n < count; n++) {
        z_owned_bytes_t payload;
        fill(buf, (size_t)size, n);
        z_bytes_from_static_buf(&payload, buf, (size_t)size);
        z_publisher_put_options_t po;
        z_publisher_put_options_default(&po);
        z_owned_encoding_t enc;
        z_encoding_from_str(&enc, "text/plain");
        po.encoding = z_encoding_move(&enc);
        if (z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), &po) != Z_OK) return 4;
        wait_for(20, NULL);
    }
    wait_for(200, NULL);
    z_publisher_delete(z_publisher_loan(&pub), NULL);
    printf("PUB DONE %d\n", count);
    wait_for(300, NULL);
    z_publisher_drop(z_publisher_move(&pub));
    return 0;
}

static int role_put(const char *key, int size) {
    z_view_keyexpr_t ke;
    z_put_options_t opts;
    z_owned_bytes_t payload, att;
    z_owned_encoding_t enc;
    static uint8_t buf[70000];
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK || size > (int)sizeof(buf)) return 2;
    fill(buf, (size_t)size, 0);
    z_bytes_copy_from_buf(&payload, buf, (size_t)size > ZP_POOL_BLOCK_SIZE - 1 ? 0 : (size_t)size);
    if ((size_t)size > ZP_POOL_BLOCK_SIZE - 1) {
        z_bytes_drop(z_bytes_move(&payload));
        z_bytes_from_static_buf(&payload, buf, (size_t)size);
    }
    z_bytes_from_static_str(&att, "meta");
    z_encoding_from_str(&enc, "application/json");
    z_put_options_default(&opts);
    opts.encoding = z_encoding_move(&enc);
    opts.attachment = z_bytes_move(&att);
    opts.is_express = true;
    opts.reliability = Z_RELIABILITY_BEST_EFFORT; /* best-effort frames (and fragments) */
    opts.priority = Z_PRIORITY_REAL_TIME;
    z_result_t res = z_put(z_session_loan(&session), z_view_keyexpr_loan(&ke), z_bytes_move(&payload), &opts);
    printf("PUT %d\n", res);
    wait_for(300, NULL);
    return res == Z_OK ? 0 : 4;
}

static int role_sub(const char *key, int count, int ms, bool liveliness, bool history) {
    z_view_keyexpr_t ke;
    z_owned_subscriber_t sub;
    z_owned_closure_sample_t cb;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    z_closure_sample(&cb, on_sample, NULL, NULL);
    z_result_t res;
    if (liveliness) {
        z_liveliness_subscriber_options_t o;
        z_liveliness_subscriber_options_default(&o);
        o.history = history;
        res = z_liveliness_declare_subscriber(z_session_loan(&session), &sub, z_view_keyexpr_loan(&ke),
                                              z_closure_sample_move(&cb), &o);
    } else {
        res = z_declare_subscriber(z_session_loan(&session), &sub, z_view_keyexpr_loan(&ke),
                                   z_closure_sample_move(&cb), NULL);
    }
    if (res != Z_OK) return 3;
    printf("READY\n");
    fflush(stdout);
    z_clock_t start = z_clock_now();
    while (LOAD(events) < count && (int)z_clock_elapsed_ms(&start) < ms) wait_for(10, NULL);
    z_subscriber_drop(z_subscriber_move(&sub));
    printf("EVENTS %d ERRORS %d\n", LOAD(events), LOAD(errors));
    return LOAD(events) >= count && LOAD(errors) == 0 ? 0 : 1;
}

static int role_get(const char *key, int expect, int ms, bool liveliness) {
    z_view_keyexpr_t ke;
    z_owned_closure_reply_t cb;
    const char *q = strchr(key, '?');
    char k[128];
    snprintf(k, sizeof(k), "%.*s", q != NULL ? (int)(q - key) : (int)strlen(key), key);
    if (z_view_keyexpr_from_str(&ke, k) != Z_OK) return 2;
    z_closure_reply(&cb, on_reply, on_reply_done, NULL);
    z_result_t res;
    if (liveliness) {
        z_liveliness_get_options_t o;
        z_liveliness_get_options_default(&o);
        o.timeout_ms = (uint64_t)ms;
        res = z_liveliness_get(z_session_loan(&session), z_view_keyexpr_loan(&ke), z_closure_reply_move(&cb), &o);
    } else {
        z_get_options_t o;
        z_owned_bytes_t payload;
        z_get_options_default(&o);
        o.timeout_ms = (uint64_t)ms;
        z_bytes_from_static_str(&payload, "question");
        o.payload = z_bytes_move(&payload);
        res = z_get(z_session_loan(&session), z_view_keyexpr_loan(&ke), q != NULL ? q + 1 : "",
                    z_closure_reply_move(&cb), &o);
    }
    if (res != Z_OK) return 3;
    wait_for(ms + 2000, &finished);
    printf("REPLIES %d\n", LOAD(events));
    return LOAD(finished) && LOAD(events) == expect ? 0 : 1;
}

/* querier KEY EXPECT MS: a querier and two gets through it, each ended by its final. */
static int role_querier(const char *key, int expect, int ms) {
    z_view_keyexpr_t ke;
    z_owned_querier_t querier;
    z_querier_options_t qo;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    z_querier_options_default(&qo);
    qo.timeout_ms = (uint64_t)ms;
    if (z_declare_querier(z_session_loan(&session), &querier, z_view_keyexpr_loan(&ke), &qo) != Z_OK) return 3;
    for (int round = 0; round < 2; round++) {
        z_owned_closure_reply_t cb;
        __atomic_store_n(&finished, false, __ATOMIC_SEQ_CST);
        z_closure_reply(&cb, on_reply, on_reply_done, NULL);
        if (z_querier_get(z_querier_loan(&querier), round == 0 ? "r=0" : "r=1", z_closure_reply_move(&cb), NULL) !=
            Z_OK)
            return 4;
        wait_for(ms + 2000, &finished);
        if (!LOAD(finished)) return 1;
    }
    z_querier_drop(z_querier_move(&querier));
    printf("REPLIES %d\n", LOAD(events));
    return LOAD(events) == 2 * expect ? 0 : 1;
}

/* aqueryable KEY MS: keeps each query (z_query_clone) and replies 200 ms later. */
static z_owned_query_t kept;
static int kept_valid = 0;

static void on_query_keep(z_loaned_query_t *query, void *ctx) {
    (void)ctx;
    if (!LOAD(kept_valid) && z_query_clone(&kept, query) == Z_OK) {
        __atomic_store_n(&kept_valid, 1, __ATOMIC_SEQ_CST);
        printf("KEPT\n");
    }
}

static int role_async_queryable(const char *key, int ms) {
    z_view_keyexpr_t ke;
    z_owned_queryable_t qbl;
    z_owned_closure_query_t cb;
    int answered = 0;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    z_closure_query(&cb, on_query_keep, NULL, NULL);
    if (z_declare_queryable(z_session_loan(&session), &qbl, z_view_keyexpr_loan(&ke), z_closure_query_move(&cb),
                            NULL) != Z_OK)
        return 3;
    printf("READY\n");
    z_clock_t start = z_clock_now();
    while ((int)z_clock_elapsed_ms(&start) < ms) {
        wait_for(200, NULL);
        if (!LOAD(kept_valid)) continue;
        z_owned_bytes_t payload;
        z_bytes_from_static_str(&payload, "later");
        if (z_query_reply(z_query_loan(&kept), z_query_keyexpr(z_query_loan(&kept)), z_bytes_move(&payload), NULL) ==
            Z_OK)
            answered++;
        z_query_drop(z_query_move(&kept)); /* the last copy: sends the final */
        __atomic_store_n(&kept_valid, 0, __ATOMIC_SEQ_CST);
        printf("ANSWERED %d\n", answered);
    }
    z_queryable_drop(z_queryable_move(&qbl));
    return answered > 0 ? 0 : 1;
}

static int role_queryable(const char *key, int ms) {
    z_view_keyexpr_t ke;
    z_owned_queryable_t qbl;
    z_owned_closure_query_t cb;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    z_closure_query(&cb, on_query, NULL, NULL);
    if (z_declare_queryable(z_session_loan(&session), &qbl, z_view_keyexpr_loan(&ke), z_closure_query_move(&cb),
                            NULL) != Z_OK)
        return 3;
    printf("READY\n");
    fflush(stdout);
    wait_for(ms, NULL);
    z_queryable_drop(z_queryable_move(&qbl));
    printf("QUERIES %d\n", LOAD(events));
    return LOAD(events) > 0 ? 0 : 1;
}

static int role_token(const char *key, int ms) {
    z_view_keyexpr_t ke;
    z_owned_liveliness_token_t tok;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    if (z_liveliness_declare_token(z_session_loan(&session), &tok, z_view_keyexpr_loan(&ke), NULL) != Z_OK) return 3;
    printf("READY\n");
    fflush(stdout);
    wait_for(ms, NULL);
    z_liveliness_token_drop(z_liveliness_token_move(&tok));
    printf("UNDECLARED\n");
    fflush(stdout);
    wait_for(500, NULL);
    return 0;
}

static int role_batch(const char *key, int count) {
    z_view_keyexpr_t ke;
    static uint8_t buf[64];
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    wait_for(300, NULL);
    zp_batch_start(z_session_loan(&session));
    for (int n = 0; n < count; n++) {
        z_owned_bytes_t payload;
        fill(buf, 10, n);
        z_bytes_copy_from_buf(&payload, buf, 10);
        if (z_put(z_session_loan(&session), z_view_keyexpr_loan(&ke), z_bytes_move(&payload), NULL) != Z_OK) return 4;
    }
    zp_batch_stop(z_session_loan(&session));
    printf("BATCH DONE %d\n", count);
    wait_for(500, NULL);
    return 0;
}

static int role_burst(const char *key, int count, bool express) {
    z_view_keyexpr_t ke;
    z_owned_publisher_t pub;
    z_publisher_options_t opts;
    static uint8_t buf[10];
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK) return 2;
    z_publisher_options_default(&opts);
    opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    opts.is_express = express;
    if (z_declare_publisher(z_session_loan(&session), &pub, z_view_keyexpr_loan(&ke), &opts) != Z_OK) return 3;
    wait_for(300, NULL);
    for (int n = 0; n < count; n++) {
        z_owned_bytes_t payload;
        fill(buf, sizeof(buf), n);
        z_bytes_copy_from_buf(&payload, buf, sizeof(buf));
        if (z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), NULL) != Z_OK) return 4;
    }
    printf("BURST DONE %d express=%d\n", count, express ? 1 : 0);
    fflush(stdout);
    wait_for(500, NULL);
    z_publisher_drop(z_publisher_move(&pub));
    return 0;
}

static int role_prio(const char *key, int rounds) {
    static uint8_t buf[64];
    wait_for(300, NULL);
    for (int n = 0; n < rounds; n++) {
        if (n == rounds / 2) zp_batch_start(z_session_loan(&session));
        for (int p = 1; p <= 7; p++) {
            char k[96];
            z_view_keyexpr_t ke;
            z_owned_bytes_t payload;
            z_put_options_t opts;
            snprintf(k, sizeof(k), "%s/%d", key, p);
            if (z_view_keyexpr_from_str(&ke, k) != Z_OK) return 2;
            fill(buf, 16, n);
            z_bytes_from_static_buf(&payload, buf, 16);
            z_put_options_default(&opts);
            opts.priority = (z_priority_t)p;
            opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
            if (z_put(z_session_loan(&session), z_view_keyexpr_loan(&ke), z_bytes_move(&payload), &opts) != Z_OK)
                return 4;
        }
        wait_for(20, NULL);
    }
    zp_batch_stop(z_session_loan(&session));
    printf("PRIO DONE %d\n", rounds);
    wait_for(500, NULL);
    return 0;
}

/* drop KEY MS: once the runner stalls the link ("READY" then 500 ms), DROP
 * puts of 1000 bytes until 20 are dropped (bounded: 20000 puts, MS ms); then
 * BLOCK puts on KEY/block until one waited for the link to move again. */
static int role_drop(const char *key, int ms) {
    static uint8_t buf[1000];
    z_view_keyexpr_t ke, kb;
    char k[96];
    snprintf(k, sizeof(k), "%s/block", key);
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK || z_view_keyexpr_from_str(&kb, k) != Z_OK) return 2;
    wait_for(300, NULL);
    printf("READY\n");
    wait_for(500, NULL);
    z_clock_t start = z_clock_now();
    unsigned long slowest = 0;
    int puts = 0;
    fill(buf, sizeof(buf), 0);
    while (zp_dropped_messages(z_session_loan(&session)) < 20 && puts < 20000 &&
           (int)z_clock_elapsed_ms(&start) < ms) {
        z_owned_bytes_t payload;
        z_put_options_t opts;
        z_bytes_from_static_buf(&payload, buf, sizeof(buf));
        z_put_options_default(&opts);
        opts.congestion_control = Z_CONGESTION_CONTROL_DROP;
        z_clock_t t0 = z_clock_now();
        z_result_t r = z_put(z_session_loan(&session), z_view_keyexpr_loan(&ke), z_bytes_move(&payload), &opts);
        if (r != Z_OK) {
            printf("PUT FAILED %d after %d puts, %u dropped\n", r, puts, (unsigned)zp_dropped_messages(z_session_loan(&session)));
            return 4;
        }
        if (z_clock_elapsed_ms(&t0) > slowest) slowest = z_clock_elapsed_ms(&t0);
        puts++;
    }
    printf("DROPPED %u of %d slowest_ms=%lu\n", (unsigned)zp_dropped_messages(z_session_loan(&session)), puts, slowest);
    /* BLOCK puts until one has waited 500 ms for the link (bounded: 5000 puts, MS ms) */
    unsigned long longest = 0;
    z_result_t res = Z_OK;
    int n = 0;
    z_clock_t t1 = z_clock_now();
    for (; n < 5000 && longest < 500 && res == Z_OK && (int)z_clock_elapsed_ms(&t1) < ms; n++) {
        z_owned_bytes_t payload;
        z_put_options_t opts;
        z_bytes_from_static_buf(&payload, buf, sizeof(buf));
        z_put_options_default(&opts);
        opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
        z_clock_t t0 = z_clock_now();
        res = z_put(z_session_loan(&session), z_view_keyexpr_loan(&kb), z_bytes_move(&payload), &opts);
        if (z_clock_elapsed_ms(&t0) > longest) longest = z_clock_elapsed_ms(&t0);
    }
    printf("BLOCK PUTS %d res=%d longest_ms=%lu\n", n, res, longest);
    wait_for(1000, NULL);
    return zp_dropped_messages(z_session_loan(&session)) >= 20 && slowest < 100 && res == Z_OK && longest >= 500 ? 0
                                                                                                               : 1;
}

static void on_hello(z_loaned_hello_t *hello, void *ctx) {
    z_view_string_t role;
    const z_loaned_string_array_t *locs = zp_hello_locators(hello);
    (void)ctx;
    z_whatami_to_view_string(z_hello_whatami(hello), &role);
    printf("HELLO %.*s locators=%zu", (int)z_string_len(z_view_string_loan(&role)),
           z_string_data(z_view_string_loan(&role)), z_string_array_len(locs));
    for (size_t i = 0; i < z_string_array_len(locs); i++) {
        const z_loaned_string_t *l = z_string_array_get(locs, i);
        printf(" %.*s", (int)z_string_len(l), z_string_data(l));
    }
    printf("\n");
    BUMP(events);
}

static void on_scout_done(void *ctx) {
    (void)ctx;
    printf("SCOUT DONE\n");
}

/* scout GROUP: z_scout on GROUP for ms milliseconds; exit 0 if a node answered. */
static int role_scout(const char *group, int ms) {
    z_owned_config_t config;
    z_owned_closure_hello_t cb;
    z_scout_options_t opts;
    z_config_default(&config);
    zp_config_insert(z_config_loan_mut(&config), Z_CONFIG_MULTICAST_LOCATOR_KEY, group);
    z_scout_options_default(&opts);
    opts.timeout_ms = (uint32_t)ms;
    z_closure_hello(&cb, on_hello, on_scout_done, NULL);
    z_result_t res = z_scout(z_config_move(&config), z_closure_hello_move(&cb), &opts);
    printf("NODES %d\n", LOAD(events));
    return res == Z_OK && LOAD(events) > 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    int a = 1;
    if (a < argc && strcmp(argv[a], "--st") == 0) {
        single_thread = true;
        a++;
    }
    if (argc - a < 3) {
        fprintf(stderr, "usage: weft_interop [--st] ROLE LOCATOR KEY [ARGS...]\n");
        return 2;
    }
    const char *role = argv[a], *locator = argv[a + 1], *key = argv[a + 2];
    int x = argc > a + 3 ? atoi(argv[a + 3]) : 0, y = argc > a + 4 ? atoi(argv[a + 4]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(role, "scout") == 0) return role_scout(locator, atoi(key));
    if (open_session(locator) != 0) return 5;
    int rc = 2;
    if (strcmp(role, "pub") == 0) rc = role_pub(key, x, y);
    if (strcmp(role, "pubrc") == 0) rc = role_pubrc(key, x);
    if (strcmp(role, "put") == 0) rc = role_put(key, x);
    if (strcmp(role, "sub") == 0 || strcmp(role, "reconnect") == 0) rc = role_sub(key, x, y, false, false);
    if (strcmp(role, "get") == 0) rc = role_get(key, x, y, false);
    if (strcmp(role, "queryable") == 0) rc = role_queryable(key, x);
    if (strcmp(role, "querier") == 0) rc = role_querier(key, x, y);
    if (strcmp(role, "aqueryable") == 0) rc = role_async_queryable(key, x);
    if (strcmp(role, "token") == 0) rc = role_token(key, x);
    if (strcmp(role, "lsub") == 0) rc = role_sub(key, x, y, true, false);
    if (strcmp(role, "lsubh") == 0) rc = role_sub(key, x, y, true, true);
    if (strcmp(role, "lget") == 0) rc = role_get(key, x, y, true);
    if (strcmp(role, "batch") == 0) rc = role_batch(key, x);
    if (strcmp(role, "burst") == 0) rc = role_burst(key, x, y != 0);
    if (strcmp(role, "prio") == 0) rc = role_prio(key, x);
    if (strcmp(role, "drop") == 0) rc = role_drop(key, x);
    z_session_drop(z_session_move(&session));
    printf("EXIT %d\n", rc);
    return rc;
}
