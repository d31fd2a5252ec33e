/* Throughput subscriber: prints msg/s every 100000 messages on test/thr, -n rounds (default 10). */
#include "common.h"

#define PER_ROUND 100000

static volatile unsigned long count = 0;
static volatile int rounds = 0;
static z_clock_t start;

static void on_sample(z_loaned_sample_t *sample, void *ctx) {
    (void)sample;
    (void)ctx;
    if (count == 0) start = z_clock_now();
    if (++count == PER_ROUND) {
        unsigned long ms = z_clock_elapsed_ms(&start);
        printf("%.1f msg/s\n", PER_ROUND * 1000.0 / (double)(ms > 0 ? ms : 1));
        fflush(stdout);
        count = 0;
        rounds++;
    }
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/thr", NULL, 10, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    z_view_keyexpr_from_str(&ke, a.key);
    z_owned_closure_sample_t callback;
    z_closure(&callback, on_sample, NULL, NULL);
    z_owned_subscriber_t sub;
    if (z_declare_subscriber(z_loan(s), &sub, z_loan(ke), z_move(callback), NULL) < 0) return -1;
    while (rounds < a.count) z_sleep_ms(100);
    z_drop(z_move(sub));
    z_drop(z_move(s));
    return 0;
}
