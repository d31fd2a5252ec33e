/* Throughput publisher: puts -s byte payloads on test/thr as fast as possible (-n puts, 0: forever). */
#include "common.h"

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "test/thr", NULL, 0, 8};
    example_args(argc, argv, &a);
    static uint8_t value[65536];
    if (a.size <= 0 || a.size > (int)sizeof(value)) return -1;
    memset(value, 1, (size_t)a.size);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    z_view_keyexpr_from_str(&ke, a.key);
    z_publisher_options_t opts;
    z_publisher_options_default(&opts);
    opts.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    z_owned_publisher_t pub;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(ke), &opts) < 0) return -1;
    printf("Publishing %d-byte payloads on '%s'...\n", a.size, a.key);
    for (long n = 0; a.count == 0 || n < a.count; n++) {
        z_owned_bytes_t payload;
        z_bytes_from_static_buf(&payload, value, (size_t)a.size);
        if (z_publisher_put(z_loan(pub), z_move(payload), NULL) < 0) z_sleep_ms(1);
    }
    z_drop(z_move(pub));
    z_drop(z_move(s));
    return 0;
}
