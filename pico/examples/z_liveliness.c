/* Declares a liveliness token, alive for -n seconds (0: forever). */
#include "common.h"

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "group1/weft-pico", NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_owned_liveliness_token_t token;
    printf("Declaring liveliness token '%s'...\n", a.key);
    if (z_liveliness_declare_token(z_loan(s), &token, z_loan(ke), NULL) < 0) {
        printf("Unable to create liveliness token!\n");
        return -1;
    }
    for (int i = 0; a.count == 0 || i < a.count; i++) z_sleep_s(1);
    z_drop(z_move(token));
    z_drop(z_move(s));
    return 0;
}
