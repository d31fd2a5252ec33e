/* Subscribes to KEY and prints COUNT samples (or gives up after TIMEOUT_MS). */
#include "app.h"

static volatile int received, wanted;

static void on_sample(z_loaned_sample_t *sample, void *arg) {
    (void)arg;
    z_view_string_t k;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &k);
    z_view_slice_t v;
    const uint8_t *data = NULL;
    size_t len = 0;
    if (z_bytes_get_contiguous_view(z_sample_payload(sample), &v) == Z_OK) {
        data = z_slice_data(z_view_slice_loan(&v));
        len = z_slice_len(z_view_slice_loan(&v));
    }
    con_str("SAMPLE ");
    con_text(z_string_data(z_view_string_loan(&k)), z_string_len(z_view_string_loan(&k)));
    con_str(" '");
    con_text((const char *)data, len);
    con_str("'");
    con_nl();
    received++;
}

int app_main(int argc, const char *const *argv) {
    const char *key = app_opt(argc, argv, "-k", "demo/example/**");
    wanted = (int)app_num(argc, argv, "-n", 1);
    long timeout = app_num(argc, argv, "-t", 30000);
    z_owned_session_t s;
    if (app_open(&s, argc, argv) < 0) return 1;
    z_view_keyexpr_t ke;
    z_owned_closure_sample_t cb;
    z_owned_subscriber_t sub;
    z_closure_sample(&cb, on_sample, NULL, NULL);
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK ||
        z_declare_subscriber(z_session_loan(&s), &sub, z_view_keyexpr_loan(&ke), z_closure_sample_move(&cb), NULL) !=
            Z_OK) {
        con_str("DECLARE FAILED");
        con_nl();
        return 2;
    }
    con_str("READY");
    con_nl();
    z_clock_t start = z_clock_now();
    while (received < wanted && z_clock_elapsed_ms(&start) < (unsigned long)timeout) zp_spin_once(z_session_loan(&s));
    z_subscriber_drop(z_subscriber_move(&sub));
    z_session_drop(z_session_move(&s));
    return received >= wanted ? 0 : 3;
}
