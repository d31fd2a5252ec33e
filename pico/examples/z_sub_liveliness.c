/* Prints liveliness tokens appearing (PUT) and disappearing (DELETE). */
#include "common.h"

static void data_handler(z_loaned_sample_t *sample, void *arg) {
    (void)arg;
    z_view_string_t keystr;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &keystr);
    printf(">> [LivelinessSubscriber] %s ('%.*s')\n",
           z_sample_kind(sample) == Z_SAMPLE_KIND_PUT ? "New alive token" : "Dropped token",
           (int)z_string_len(z_loan(keystr)), z_string_data(z_loan(keystr)));
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "group1/**", NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_owned_closure_sample_t callback;
    z_closure(&callback, data_handler, NULL, NULL);
    z_liveliness_subscriber_options_t options;
    z_liveliness_subscriber_options_default(&options);
    options.history = true;
    z_owned_subscriber_t sub;
    if (z_liveliness_declare_subscriber(z_loan(s), &sub, z_loan(ke), z_move(callback), &options) < 0) {
        printf("Unable to declare liveliness subscriber.\n");
        return -1;
    }
    for (int i = 0; a.count == 0 || i < a.count; i++) z_sleep_s(1);
    z_drop(z_move(sub));
    z_drop(z_move(s));
    return 0;
}
