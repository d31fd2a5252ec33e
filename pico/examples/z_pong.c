/* Latency echo: republishes every sample of test/ping on test/pong, for -n seconds (0: until killed). */
#include "common.h"

static z_owned_publisher_t pub;

static void on_ping(z_loaned_sample_t *sample, void *ctx) {
    (void)ctx;
    /* zero copy: the sample's bytes stay valid until the callback returns */
    z_view_slice_t view;
    z_bytes_get_contiguous_view(z_sample_payload(sample), &view);
    z_owned_bytes_t payload;
    z_bytes_from_static_buf(&payload, z_slice_data(z_loan(view)), z_slice_len(z_loan(view)));
    z_publisher_put(z_loan(pub), z_move(payload), NULL);
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/ping", NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ping, pong;
    z_view_keyexpr_from_str(&ping, "test/ping");
    z_view_keyexpr_from_str(&pong, "test/pong");
    z_publisher_options_t opts;
    z_publisher_options_default(&opts);
    opts.is_express = true;
    opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(pong), &opts) < 0) return -1;
    z_owned_closure_sample_t callback;
    z_closure(&callback, on_ping, NULL, NULL);
    z_owned_subscriber_t sub;
    if (z_declare_subscriber(z_loan(s), &sub, z_loan(ping), z_move(callback), NULL) < 0) return -1;
    for (int i = 0; a.count == 0 || i < a.count; i++) z_sleep_s(1);
    z_drop(z_move(sub));
    z_drop(z_move(pub));
    z_drop(z_move(s));
    return 0;
}
