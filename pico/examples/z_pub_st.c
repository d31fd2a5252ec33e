/* Single-threaded publisher: puts while spinning the session (keep-alive, reads). */
#include "common.h"

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/weft-pico-pub", "Pub from weft-pico!", 10, 0};
    example_args(argc, argv, &a);
    z_owned_config_t config;
    z_config_default(&config);
    zp_config_insert(z_loan_mut(config), Z_CONFIG_CONNECT_KEY, a.locator);
    z_open_options_t options;
    z_open_options_default(&options);
#if Z_FEATURE_MULTI_THREAD == 1
    options.auto_start_read_task = false;
    options.auto_start_lease_task = false;
#endif
    z_owned_session_t s;
    if (z_open(&s, z_move(config), &options) < 0) return -1;
    z_view_keyexpr_t ke;
    z_view_keyexpr_from_str(&ke, a.key);
    z_owned_publisher_t pub;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(ke), NULL) < 0) return -1;
    char buf[256];
    for (int i = 0; i < a.count; i++) {
        z_clock_t start = z_clock_now();
        while (z_clock_elapsed_ms(&start) < 1000) zp_spin_once(z_loan(s));
        snprintf(buf, sizeof(buf), "[%4d] %s", i, a.value);
        z_owned_bytes_t payload;
        z_bytes_copy_from_str(&payload, buf);
        printf("Putting Data ('%s': '%s')...\n", a.key, buf);
        z_publisher_put(z_loan(pub), z_move(payload), NULL);
    }
    z_drop(z_move(pub));
    z_drop(z_move(s));
    return 0;
}
