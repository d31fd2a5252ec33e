/* Sends a query on SELECTOR (-k KEY?PARAMS, payload -v) and prints the replies;
 * succeeds with at least COUNT replies before the final. */
#include "app.h"

static volatile int replies, done;

static void on_reply(z_loaned_reply_t *reply, void *arg) {
    (void)arg;
    if (!z_reply_is_ok(reply)) {
        con_str("REPLY_ERR");
        con_nl();
        return;
    }
    const z_loaned_sample_t *sample = z_reply_ok(reply);
    z_view_string_t k;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &k);
    z_view_slice_t v;
    const uint8_t *data = NULL;
    size_t len = 0;
    if (z_bytes_get_contiguous_view(z_sample_payload(sample), &v) == Z_OK) {
        data = z_slice_data(z_view_slice_loan(&v));
        len = z_slice_len(z_view_slice_loan(&v));
    }
    con_str("REPLY ");
    con_text(z_string_data(z_view_string_loan(&k)), z_string_len(z_view_string_loan(&k)));
    con_str(" '");
    con_text((const char *)data, len);
    con_str("'");
    con_nl();
    replies++;
}

static void on_final(void *arg) {
    (void)arg;
    done = 1;
}

int app_main(int argc, const char *const *argv) {
    const char *selector = app_opt(argc, argv, "-k", "demo/example/**");
    const char *value = app_opt(argc, argv, "-v", NULL);
    long count = app_num(argc, argv, "-n", 1), timeout = app_num(argc, argv, "-t", 10000);
    const char *q = strchr(selector, '?');
    size_t klen = q != NULL ? (size_t)(q - selector) : strlen(selector);
    z_owned_session_t s;
    if (app_open(&s, argc, argv) < 0) return 1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_substr(&ke, selector, klen) != Z_OK) return 2;
    z_get_options_t opts;
    z_get_options_default(&opts);
    opts.timeout_ms = (uint64_t)timeout;
    z_owned_bytes_t payload;
    if (value != NULL) {
        z_bytes_from_static_str(&payload, value);
        opts.payload = z_bytes_move(&payload);
    }
    z_owned_closure_reply_t cb;
    z_closure_reply(&cb, on_reply, on_final, NULL);
    if (z_get(z_session_loan(&s), z_view_keyexpr_loan(&ke), q != NULL ? q + 1 : "", z_closure_reply_move(&cb), &opts) !=
        Z_OK) {
        con_str("GET FAILED");
        con_nl();
        return 3;
    }
    app_spin(&s, (uint32_t)timeout + 1000u, &done);
    con_str("FINAL ");
    con_int(replies);
    con_nl();
    z_session_drop(z_session_move(&s));
    return done && replies >= count ? 0 : 4;
}
