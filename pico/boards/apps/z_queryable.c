/* Declares a queryable on KEY answering VALUE; ends after COUNT queries (or TIMEOUT_MS). */
#include "app.h"

static const char *reply_value;
static volatile int answered;

static void on_query(z_loaned_query_t *query, void *arg) {
    (void)arg;
    z_view_string_t k, params;
    z_keyexpr_as_view_string(z_query_keyexpr(query), &k);
    z_query_parameters(query, &params);
    con_str("QUERY ");
    con_text(z_string_data(z_view_string_loan(&k)), z_string_len(z_view_string_loan(&k)));
    con_str("?");
    con_text(z_string_data(z_view_string_loan(&params)), z_string_len(z_view_string_loan(&params)));
    con_nl();
    z_owned_bytes_t payload;
    z_bytes_from_static_str(&payload, reply_value);
    if (z_query_reply(query, z_query_keyexpr(query), z_bytes_move(&payload), NULL) == Z_OK) answered++;
}

int app_main(int argc, const char *const *argv) {
    const char *key = app_opt(argc, argv, "-k", "demo/example/weft-pico-queryable");
    reply_value = app_opt(argc, argv, "-v", "Queryable from weft-pico!");
    long count = app_num(argc, argv, "-n", 1), timeout = app_num(argc, argv, "-t", 30000);
    z_owned_session_t s;
    if (app_open(&s, argc, argv) < 0) return 1;
    z_view_keyexpr_t ke;
    z_owned_closure_query_t cb;
    z_owned_queryable_t qbl;
    z_closure_query(&cb, on_query, NULL, NULL);
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK ||
        z_declare_queryable(z_session_loan(&s), &qbl, z_view_keyexpr_loan(&ke), z_closure_query_move(&cb), NULL) !=
            Z_OK) {
        con_str("DECLARE FAILED");
        con_nl();
        return 2;
    }
    con_str("READY");
    con_nl();
    z_clock_t start = z_clock_now();
    while (answered < count && z_clock_elapsed_ms(&start) < (unsigned long)timeout) zp_spin_once(z_session_loan(&s));
    z_queryable_drop(z_queryable_move(&qbl));
    z_session_drop(z_session_move(&s));
    return answered >= count ? 0 : 3;
}
