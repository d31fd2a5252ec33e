/*
 * Latency: publishes -s byte payloads on test/ping and waits for each echo on
 * test/pong (z_pong), -w warm-up round trips (default 100) then -n measured
 * ones (default 100); every wait is bounded (1 s), the whole run by -t seconds
 * (default 60). After the run, one line per round trip, then:
 * p50_us=X p99_us=Y payload=SIZE   (one way: half the round trip)
 */
#include "common.h"

#if Z_FEATURE_MULTI_THREAD == 1
#define MAX_SAMPLES 1000000

static z_owned_condvar_t cond;
static z_owned_mutex_t mutex;
static volatile bool got = false;
static unsigned long rtt_us[MAX_SAMPLES];
static unsigned long sorted_us[MAX_SAMPLES];

static void on_pong(z_loaned_sample_t *sample, void *ctx) {
    (void)sample;
    (void)ctx;
    z_mutex_lock(z_loan_mut(mutex));
    got = true;
    z_condvar_signal(z_loan_mut(cond));
    z_mutex_unlock(z_loan_mut(mutex));
}

static int cmp_ulong(const void *x, const void *y) {
    unsigned long a = *(const unsigned long *)x, b = *(const unsigned long *)y;
    return a < b ? -1 : a > b ? 1 : 0;
}

/* Publishes one ping and waits for its pong: the round trip in us, or 0 on timeout. */
static unsigned long round_trip(const z_loaned_publisher_t *pub, const uint8_t *data, size_t size) {
    z_owned_bytes_t payload;
    z_bytes_from_static_buf(&payload, (uint8_t *)data, size);
    z_clock_t t0 = z_clock_now();
    z_clock_t deadline = t0;
    z_clock_advance_s(&deadline, 1);
    z_mutex_lock(z_loan_mut(mutex));
    got = false;
    z_publisher_put(pub, z_move(payload), NULL);
    while (!got) {
        if (z_condvar_timedwait(z_loan_mut(cond), z_loan_mut(mutex), &deadline) == Z_ETIMEDOUT) break;
    }
    bool ok = got;
    z_mutex_unlock(z_loan_mut(mutex));
    unsigned long us = z_clock_elapsed_us(&t0);
    return ok ? (us > 0 ? us : 1) : 0;
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/ping", NULL, 100, 8};
    example_args(argc, argv, &a);
    long warmup = example_opt(argc, argv, "-w", 100);
    long seconds = example_opt(argc, argv, "-t", 60);
    static uint8_t data[65536];
    if (a.size <= 0 || a.size > (int)sizeof(data) || a.count <= 0 || a.count > MAX_SAMPLES || warmup < 0 ||
        seconds <= 0)
        return -1;
    memset(data, 0x5a, (size_t)a.size);
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
    opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    z_owned_publisher_t pub;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(ping), &opts) < 0) return -1;
    z_clock_t start = z_clock_now();
    unsigned long limit_ms = (unsigned long)seconds * 1000ul;
    /* until the pong answers (declarations take a moment to reach it) */
    bool answered = false;
    while (!answered && z_clock_elapsed_ms(&start) < limit_ms && z_clock_elapsed_ms(&start) < 10000ul)
        answered = round_trip(z_loan(pub), data, (size_t)a.size) != 0;
    int measured = 0, rc = 0;
    if (!answered) {
        printf("no pong answered\n");
        rc = 1;
    }
    for (long i = 0; rc == 0 && i < warmup + a.count; i++) {
        if (z_clock_elapsed_ms(&start) >= limit_ms) break;
        unsigned long us = round_trip(z_loan(pub), data, (size_t)a.size);
        if (us == 0) {
            printf("a pong was lost\n");
            rc = 1;
        } else if (i >= warmup) {
            rtt_us[measured++] = us;
        }
    }
    z_drop(z_move(pub));
    z_drop(z_move(sub));
    z_drop(z_move(s));
    z_drop(z_move(cond));
    z_drop(z_move(mutex));
    for (int i = 0; i < measured; i++) printf("%d bytes: seq=%d rtt=%lu us lat=%lu us\n", a.size, i, rtt_us[i], rtt_us[i] / 2);
    if (measured == 0) return 1;
    memcpy(sorted_us, rtt_us, (size_t)measured * sizeof(rtt_us[0]));
    qsort(sorted_us, (size_t)measured, sizeof(sorted_us[0]), cmp_ulong);
    size_t p99 = (size_t)((double)measured * 0.99);
    if (p99 >= (size_t)measured) p99 = (size_t)measured - 1;
    printf("p50_us=%.1f p99_us=%.1f payload=%d samples=%d\n", (double)sorted_us[measured / 2] / 2.0,
           (double)sorted_us[p99] / 2.0, a.size, measured);
    return rc;
}
#else
int main(void) {
    printf("z_ping needs Z_FEATURE_MULTI_THREAD = 1\n");
    return -2;
}
#endif
