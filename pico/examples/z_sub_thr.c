/*
 * Throughput subscriber: counts the samples of test/thr in rounds of -c
 * messages (default 100000), -n rounds (default 10), for at most -t seconds
 * (default 60). The first round starts at the first sample.
 * One line per round, then: median_msgs_per_s=R payload=SIZE
 */
#include "common.h"

#define MAX_ROUNDS 1000

static volatile unsigned long count = 0;
static volatile size_t payload_len = 0;

static void on_sample(z_loaned_sample_t *sample, void *ctx) {
    (void)ctx;
    payload_len = z_bytes_len(z_sample_payload(sample));
    count = count + 1;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b ? 1 : 0;
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/thr", NULL, 10, 0};
    example_args(argc, argv, &a);
    long per_round = example_opt(argc, argv, "-c", 100000);
    long seconds = example_opt(argc, argv, "-t", 60);
    if (a.count <= 0 || a.count > MAX_ROUNDS || per_round <= 0 || seconds <= 0) return -1;
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    z_view_keyexpr_from_str(&ke, a.key);
    z_owned_closure_sample_t callback;
    z_closure(&callback, on_sample, NULL, NULL);
    z_owned_subscriber_t sub;
    if (z_declare_subscriber(z_loan(s), &sub, z_loan(ke), z_move(callback), NULL) < 0) return -1;
    printf("Counting samples of '%s'...\n", a.key);
    fflush(stdout);
    static double rates[MAX_ROUNDS];
    int done = 0;
    z_clock_t give_up = z_clock_now();
    unsigned long limit_ms = (unsigned long)seconds * 1000ul;
    while (count == 0 && z_clock_elapsed_ms(&give_up) < limit_ms) z_sleep_ms(1);
    while (done < a.count && z_clock_elapsed_ms(&give_up) < limit_ms) {
        unsigned long first = count;
        z_clock_t start = z_clock_now();
        while (count - first < (unsigned long)per_round && z_clock_elapsed_ms(&give_up) < limit_ms) z_sleep_us(200);
        unsigned long n = count - first, us = z_clock_elapsed_us(&start);
        if (n < (unsigned long)per_round) break;
        rates[done] = (double)n * 1e6 / (double)(us > 0 ? us : 1);
        printf("round %d: %.0f msgs/s\n", done, rates[done]);
        fflush(stdout);
        done++;
    }
    z_drop(z_move(sub));
    z_drop(z_move(s));
    if (done == 0) {
        printf("no complete round within %ld s\n", seconds);
        return 1;
    }
    qsort(rates, (size_t)done, sizeof(rates[0]), cmp_double);
    printf("median_msgs_per_s=%.0f payload=%zu\n", rates[done / 2], (size_t)payload_len);
    return 0;
}
