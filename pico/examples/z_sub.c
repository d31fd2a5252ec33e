/* Subscribes to a key expression and prints every sample. */
#include "common.h"

static void data_handler(z_loaned_sample_t *sample, void *arg) {
    (void)arg;
    z_view_string_t keystr;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &keystr);
    z_owned_string_t value;
    z_bytes_to_string(z_sample_payload(sample), &value);
    printf(">> [Subscriber] Received %s ('%.*s': '%.*s')\n",
           z_sample_kind(sample) == Z_SAMPLE_KIND_PUT ? "PUT" : "DELETE", (int)z_string_len(z_loan(keystr)),
           z_string_data(z_loan(keystr)), (int)z_string_len(z_loan(value)), z_string_data(z_loan(value)));
    z_drop(z_move(value));
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/**", NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_owned_closure_sample_t callback;
    z_closure(&callback, data_handler, NULL, NULL);
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_owned_subscriber_t sub;
    printf("Declaring Subscriber on '%s'...\n", a.key);
    if (z_declare_subscriber(z_loan(s), &sub, z_loan(ke), z_move(callback), NULL) < 0) {
        printf("Unable to declare subscriber.\n");
        return -1;
    }
    for (int i = 0; a.count == 0 || i < a.count; i++) z_sleep_s(1);
    z_drop(z_move(sub));
    z_drop(z_move(s));
    return 0;
}
