/* Footprint (b): a full client — pub, sub, get, queryable, liveliness, batching, spin loop. */
#include "zenoh-pico.h"

static void on_sample(z_loaned_sample_t *sample, void *ctx) {
    (void)ctx;
    (void)z_bytes_len(z_sample_payload(sample));
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

int main(void) {
    z_owned_config_t config;
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
    z_config_default(&config);
    zp_config_insert(z_config_loan_mut(&config), Z_CONFIG_CONNECT_KEY, "tcp/192.168.1.10:7447");
    if (z_open(&s, z_config_move(&config), NULL) != Z_OK) return 1;
    z_view_keyexpr_from_str(&ke, "demo/example/pub");
    z_view_keyexpr_from_str(&wild, "demo/**");
    z_declare_publisher(z_session_loan(&s), &pub, z_view_keyexpr_loan(&ke), NULL);
    z_closure_sample(&scb, on_sample, NULL, NULL);
    z_declare_subscriber(z_session_loan(&s), &sub, z_view_keyexpr_loan(&wild), z_closure_sample_move(&scb), NULL);
    z_closure_query(&qcb, on_query, NULL, NULL);
    z_declare_queryable(z_session_loan(&s), &qbl, z_view_keyexpr_loan(&ke), z_closure_query_move(&qcb), NULL);
    z_liveliness_declare_token(z_session_loan(&s), &tok, z_view_keyexpr_loan(&ke), NULL);
    z_closure_sample(&lcb, on_sample, NULL, NULL);
    z_liveliness_declare_subscriber(z_session_loan(&s), &lsub, z_view_keyexpr_loan(&wild),
                                    z_closure_sample_move(&lcb), NULL);
    z_closure_reply(&rcb, on_reply, NULL, NULL);
    z_get(z_session_loan(&s), z_view_keyexpr_loan(&wild), "", z_closure_reply_move(&rcb), NULL);
    z_closure_reply(&lrcb, on_reply, NULL, NULL);
    z_liveliness_get(z_session_loan(&s), z_view_keyexpr_loan(&wild), z_closure_reply_move(&lrcb), NULL);
    zp_batch_start(z_session_loan(&s));
    z_bytes_copy_from_str(&payload, "Pub from weft-pico!");
    z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), NULL);
    z_delete(z_session_loan(&s), z_view_keyexpr_loan(&ke), NULL);
    zp_batch_stop(z_session_loan(&s));
    for (int i = 0; i < 10; i++) zp_spin_once(z_session_loan(&s));
    z_liveliness_token_drop(z_liveliness_token_move(&tok));
    z_subscriber_drop(z_subscriber_move(&lsub));
    z_queryable_drop(z_queryable_move(&qbl));
    z_subscriber_drop(z_subscriber_move(&sub));
    z_publisher_drop(z_publisher_move(&pub));
    z_session_drop(z_session_move(&s));
    return 0;
}
