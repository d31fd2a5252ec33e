/* Single-threaded subscriber: no tasks, the application drives the session with zp_spin_once. */
#include "common.h"

static int received = 0;

static void data_handler(z_loaned_sample_t *sample, void *arg) {
    (void)arg;
    z_view_string_t keystr;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &keystr);
    printf(">> [Subscriber] Received ('%.*s': %zu bytes)\n", (int)z_string_len(z_loan(keystr)),
           z_string_data(z_loan(keystr)), z_bytes_len(z_sample_payload(sample)));
    received++;
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/**", NULL, 10, 0};
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
    z_owned_closure_sample_t callback;
    z_closure(&callback, data_handler, NULL, NULL);
    z_view_keyexpr_t ke;
    z_view_keyexpr_from_str(&ke, a.key);
    z_owned_subscriber_t sub;
    if (z_declare_subscriber(z_loan(s), &sub, z_loan(ke), z_move(callback), NULL) < 0) return -1;
    while (received < a.count && zp_spin_once(z_loan(s))) {
    }
    z_drop(z_move(sub));
    z_drop(z_move(s));
    return 0;
}
