/* Declares a publisher and puts "[i] VALUE" COUNT times, every INTERVAL_MS. */
#include "app.h"

int app_main(int argc, const char *const *argv) {
    const char *key = app_opt(argc, argv, "-k", "demo/example/weft-pico-pub");
    const char *value = app_opt(argc, argv, "-v", "Pub from weft-pico!");
    long count = app_num(argc, argv, "-n", 10), interval = app_num(argc, argv, "-i", 1000);
    z_owned_session_t s;
    if (app_open(&s, argc, argv) < 0) return 1;
    z_view_keyexpr_t ke;
    z_owned_publisher_t pub;
    if (z_view_keyexpr_from_str(&ke, key) != Z_OK ||
        z_declare_publisher(z_session_loan(&s), &pub, z_view_keyexpr_loan(&ke), NULL) != Z_OK) {
        con_str("DECLARE FAILED");
        con_nl();
        return 2;
    }
    int rc = 0;
    for (long i = 0; i < count; i++) {
        char buf[64];
        size_t n = 0;
        long v = i;
        char digits[12];
        int d = 0;
        do {
            digits[d++] = (char)('0' + v % 10);
            v /= 10;
        } while (v != 0);
        buf[n++] = '[';
        while (d > 0) buf[n++] = digits[--d];
        buf[n++] = ']';
        buf[n++] = ' ';
        for (const char *c = value; *c != '\0' && n + 1 < sizeof(buf); c++) buf[n++] = *c;
        z_owned_bytes_t payload;
        z_bytes_copy_from_buf(&payload, (const uint8_t *)buf, n);
        if (z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), NULL) != Z_OK) rc = 3;
        con_str("PUT ");
        con_str(key);
        con_str(" '");
        con_text(buf, n);
        con_str("'");
        con_nl();
        app_spin(&s, (uint32_t)interval, NULL);
    }
    z_publisher_drop(z_publisher_move(&pub));
    z_session_drop(z_session_move(&s));
    return rc;
}
