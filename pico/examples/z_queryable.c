/* Declares a queryable that answers every query with a fixed value. */
#include "common.h"

static const char *reply_value = "Queryable from weft-pico!";

static void query_handler(z_loaned_query_t *query, void *ctx) {
    (void)ctx;
    z_view_string_t keystr, params;
    z_keyexpr_as_view_string(z_query_keyexpr(query), &keystr);
    z_query_parameters(query, &params);
    printf(" >> [Queryable handler] Received Query '%.*s?%.*s'\n", (int)z_string_len(z_loan(keystr)),
           z_string_data(z_loan(keystr)), (int)z_string_len(z_loan(params)), z_string_data(z_loan(params)));
    z_owned_bytes_t reply_payload;
    z_bytes_from_static_str(&reply_payload, reply_value);
    z_query_reply(query, z_query_keyexpr(query), z_move(reply_payload), NULL);
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/weft-pico-queryable", NULL, 0, 0};
    example_args(argc, argv, &a);
    if (a.value != NULL) reply_value = a.value;
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_owned_closure_query_t callback;
    z_closure(&callback, query_handler, NULL, NULL);
    z_owned_queryable_t qable;
    printf("Creating Queryable on '%s'...\n", a.key);
    if (z_declare_queryable(z_loan(s), &qable, z_loan(ke), z_move(callback), NULL) < 0) {
        printf("Unable to create queryable.\n");
        return -1;
    }
    for (int i = 0; a.count == 0 || i < a.count; i++) z_sleep_s(1);
    z_drop(z_move(qable));
    z_drop(z_move(s));
    return 0;
}
