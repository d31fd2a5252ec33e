/*
 * Throughput publisher: puts -s byte payloads on test/thr as fast as it can,
 * for at most -n puts (0: no limit) and -t seconds (default 10).
 * By default puts are batched automatically when the lease task is the
 * writer (Z_FEATURE_AUTO_BATCHING): puts made while it writes share a batch.
 * -b N batches the puts by hand (zp_batch_start) and flushes every N of them.
 * -x 1 makes the publisher express: every put is sent at once, alone.
 * -d 1 puts with congestion control drop (as Zenoh-Pico's z_pub_thr does; the
 * default, block, costs each put a QoS extension of 2 bytes on the wire).
 * Last line: sent=N seconds=S msgs_per_s=R payload=SIZE batch=N express=0|1
 */
#include "common.h"

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/thr", NULL, 0, 8};
    example_args(argc, argv, &a);
    long seconds = example_opt(argc, argv, "-t", 10);
    long batch = example_opt(argc, argv, "-b", 0);
    bool express = example_opt(argc, argv, "-x", 0) != 0;
    bool drop = example_opt(argc, argv, "-d", 0) != 0;
    static uint8_t value[65536];
    if (a.size <= 0 || a.size > (int)sizeof(value) || seconds <= 0 || batch < 0) return -1;
    memset(value, 1, (size_t)a.size);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    z_view_keyexpr_from_str(&ke, a.key);
    z_publisher_options_t opts;
    z_publisher_options_default(&opts);
    opts.congestion_control = drop ? Z_CONGESTION_CONTROL_DROP : Z_CONGESTION_CONTROL_BLOCK;
    opts.is_express = express;
    z_owned_publisher_t pub;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(ke), &opts) < 0) return -1;
    printf("Publishing %d-byte payloads on '%s' for %ld s%s...\n", a.size, a.key, seconds,
           batch > 0 ? " (batched by hand)" : express ? " (express)" : "");
    fflush(stdout);
    if (batch > 0) zp_batch_start(z_loan(s));
    z_clock_t start = z_clock_now();
    unsigned long limit_us = (unsigned long)seconds * 1000000ul, elapsed = 0;
    long sent = 0, pending = 0, iter = 0;
    while ((a.count == 0 || sent < a.count) && elapsed < limit_us) {
        z_owned_bytes_t payload;
        z_bytes_from_static_buf(&payload, value, (size_t)a.size);
        if (z_publisher_put(z_loan(pub), z_move(payload), NULL) < 0) {
            z_sleep_ms(1); /* link lost: the session reconnects */
        } else {
            sent++;
            if (batch > 0 && ++pending == batch) {
                zp_batch_flush(z_loan(s));
                pending = 0;
            }
        }
        if ((++iter & 255) == 0) elapsed = z_clock_elapsed_us(&start);
    }
    if (batch > 0) zp_batch_stop(z_loan(s));
    elapsed = z_clock_elapsed_us(&start);
    printf("sent=%ld seconds=%.3f msgs_per_s=%.0f payload=%d batch=%ld express=%d\n", sent, (double)elapsed / 1e6,
           (double)sent * 1e6 / (double)(elapsed > 0 ? elapsed : 1), a.size, batch, express ? 1 : 0);
    z_drop(z_move(pub));
    z_drop(z_move(s));
    return 0;
}
