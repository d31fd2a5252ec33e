/*
 * Every client feature in one image, for the footprint table: a publisher, a
 * subscriber, a queryable, a liveliness token and a liveliness subscriber, a
 * get and a liveliness get (run until their finals), a batch of a put and a
 * delete. Run against a router alone it exercises the open, declarations,
 * sending, replies and finals; the stack's high-water mark is measured on it.
 */
#include "app.h"

static volatile int samples, finals;

static void on_sample(z_loaned_sample_t *sample, void *ctx) {
    (void)ctx;
    (void)z_bytes_len(z_sample_payload(sample));
    samples++;
}

static void on_query(z_loaned_query_t *query, void *ctx) {
    z_owned_bytes_t reply;
    (void)ctx;
    z_bytes_from_static_str(&reply, "answer");
    z_query_reply(query, z_query_keyexpr(query), z_bytes_move(&reply), NULL);
}

static void on_reply(z_loaned_reply_t *reply, void *ctx) {
    (void)ctx;
    if (z_reply_is_ok(reply)) (void)z_bytes_len(z_sample_payload(z_reply_ok(reply)));
}

static void on_final(void *ctx) {
    (void)ctx;
    finals++;
}

int app_main(int argc, const char *const *argv) {
    const char *key = app_opt(argc, argv, "-k", "demo/example/full");
    z_owned_session_t s;
    z_owned_publisher_t pub;
    z_owned_subscriber_t sub, lsub;
    z_owned_queryable_t qbl;
    z_owned_liveliness_token_t tok;
    z_owned_closure_sample_t scb, lcb;
    z_owned_closure_query_t qcb;
    z_owned_closure_reply_t rcb, lrcb;
    z_view_keyexpr_t ke, wild;
    z_owned_bytes_t payload;
    if (app_open(&s, argc, argv) < 0) return 1;
    z_view_keyexpr_from_str(&ke, key);
    z_view_keyexpr_from_str(&wild, "demo/**");
    int bad = 0;
    bad |= z_declare_publisher(z_session_loan(&s), &pub, z_view_keyexpr_loan(&ke), NULL) != Z_OK;
    z_closure_sample(&scb, on_sample, NULL, NULL);
    bad |= z_declare_subscriber(z_session_loan(&s), &sub, z_view_keyexpr_loan(&wild), z_closure_sample_move(&scb),
                                NULL) != Z_OK;
    z_closure_query(&qcb, on_query, NULL, NULL);
    bad |= z_declare_queryable(z_session_loan(&s), &qbl, z_view_keyexpr_loan(&ke), z_closure_query_move(&qcb), NULL) !=
           Z_OK;
    bad |= z_liveliness_declare_token(z_session_loan(&s), &tok, z_view_keyexpr_loan(&ke), NULL) != Z_OK;
    z_closure_sample(&lcb, on_sample, NULL, NULL);
    bad |= z_liveliness_declare_subscriber(z_session_loan(&s), &lsub, z_view_keyexpr_loan(&wild),
                                           z_closure_sample_move(&lcb), NULL) != Z_OK;
    z_closure_reply(&rcb, on_reply, on_final, NULL);
    bad |= z_get(z_session_loan(&s), z_view_keyexpr_loan(&wild), "", z_closure_reply_move(&rcb), NULL) != Z_OK;
    z_closure_reply(&lrcb, on_reply, on_final, NULL);
    bad |= z_liveliness_get(z_session_loan(&s), z_view_keyexpr_loan(&wild), z_closure_reply_move(&lrcb), NULL) != Z_OK;
    zp_batch_start(z_session_loan(&s));
    z_bytes_copy_from_str(&payload, "Pub from weft-pico!");
    bad |= z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), NULL) != Z_OK;
    bad |= z_delete(z_session_loan(&s), z_view_keyexpr_loan(&ke), NULL) != Z_OK;
    zp_batch_stop(z_session_loan(&s));
    z_clock_t start = z_clock_now();
    while (finals < 2 && z_clock_elapsed_ms(&start) < 15000u) zp_spin_once(z_session_loan(&s));
    con_str("FINALS ");
    con_int(finals);
    con_str(" SAMPLES ");
    con_int(samples);
    con_nl();
    z_liveliness_token_drop(z_liveliness_token_move(&tok));
    z_subscriber_drop(z_subscriber_move(&lsub));
    z_queryable_drop(z_queryable_move(&qbl));
    z_subscriber_drop(z_subscriber_move(&sub));
    z_publisher_drop(z_publisher_move(&pub));
    z_session_drop(z_session_move(&s));
    return bad == 0 && finals == 2 ? 0 : 2;
}
