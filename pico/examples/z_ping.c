/* Latency: publishes on test/ping, waits for the echo on test/pong, prints round-trip times. */
#include "common.h"

#if Z_FEATURE_MULTI_THREAD == 1
static z_owned_condvar_t cond;
static z_owned_mutex_t mutex;
static volatile bool got = false;

static void on_pong(z_loaned_sample_t *sample, void *ctx) {
    (void)sample;
    (void)ctx;
    z_mutex_lock(z_loan_mut(mutex));
    got = true;
    z_condvar_signal(z_loan_mut(cond));
    z_mutex_unlock(z_loan_mut(mutex));
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/ping", NULL, 100, 8};
    example_args(argc, argv, &a);
    static uint8_t data[65536];
    if (a.size <= 0 || a.size > (int)sizeof(data)) return -1;
    z_mutex_init(&mutex);
    z_condvar_init(&cond);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ping, pong;
    z_view_keyexpr_from_str(&ping, "test/ping");
    z_view_keyexpr_from_str(&pong, "test/pong");
    z_owned_closure_sample_t callback;
    z_closure(&callback, on_pong, NULL, NULL);
    z_owned_subscriber_t sub;
    if (z_declare_subscriber(z_loan(s), &sub, z_loan(pong), z_move(callback), NULL) < 0) return -1;
    z_publisher_options_t opts;
    z_publisher_options_default(&opts);
    opts.is_express = true;
    z_owned_publisher_t pub;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(ping), &opts) < 0) return -1;
    z_sleep_ms(500);
    for (int i = 0; i < a.count; i++) {
        z_owned_bytes_t payload;
        z_bytes_from_static_buf(&payload, data, (size_t)a.size);
        z_clock_t t0 = z_clock_now();
        z_mutex_lock(z_loan_mut(mutex));
        got = false;
        z_publisher_put(z_loan(pub), z_move(payload), NULL);
        while (!got) z_condvar_wait(z_loan_mut(cond), z_loan_mut(mutex));
        z_mutex_unlock(z_loan_mut(mutex));
        printf("%d bytes: seq=%d rtt=%lu us\n", a.size, i, z_clock_elapsed_us(&t0));
    }
    z_drop(z_move(pub));
    z_drop(z_move(sub));
    z_drop(z_move(s));
    z_drop(z_move(cond));
    z_drop(z_move(mutex));
    return 0;
}
#else
int main(void) {
    printf("z_ping needs Z_FEATURE_MULTI_THREAD = 1\n");
    return -2;
}
#endif
