/* Declares a liveliness token on KEY, holds it TIMEOUT_MS, then undeclares it. */
#include "app.h"

int app_main(int argc, const char *const *argv) {
    const char *key = app_opt(argc, argv, "-k", "group1/weft-pico");
    long hold = app_num(argc, argv, "-t", 10000);
    z_owned_session_t s;
    if (app_open(&s, argc, argv) < 0) return 1;
    z_view_keyexpr_t ke;
    z_owned_liveliness_token_t tok;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK ||
        z_liveliness_declare_token(z_session_loan(&s), &tok, z_view_keyexpr_loan(&ke), NULL) != Z_OK) {
        con_str("DECLARE FAILED");
        con_nl();
        return 2;
    }
    con_str("READY");
    con_nl();
    app_spin(&s, (uint32_t)hold, NULL);
    z_liveliness_token_drop(z_liveliness_token_move(&tok));
    con_str("UNDECLARED");
    con_nl();
    app_spin(&s, 200, NULL);
    z_session_drop(z_session_move(&s));
    return 0;
}
