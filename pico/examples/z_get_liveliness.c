/* Lists the liveliness tokens currently alive under a key expression. */
#include "common.h"

static volatile bool done = false;

static void reply_handler(z_loaned_reply_t *reply, void *ctx) {
    (void)ctx;
    if (z_reply_is_ok(reply)) {
        z_view_string_t keystr;
        z_keyexpr_as_view_string(z_sample_keyexpr(z_reply_ok(reply)), &keystr);
        printf(">> Alive token ('%.*s')\n", (int)z_string_len(z_loan(keystr)), z_string_data(z_loan(keystr)));
    }
}

static void reply_dropper(void *ctx) {
    (void)ctx;
    done = true;
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "group1/**", NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_owned_closure_reply_t callback;
    z_closure(&callback, reply_handler, reply_dropper, NULL);
    if (z_liveliness_get(z_loan(s), z_loan(ke), z_move(callback), NULL) < 0) {
        printf("Liveliness query failed\n");
        return -1;
    }
    while (!done) z_sleep_ms(10);
    z_drop(z_move(s));
    return 0;
}
