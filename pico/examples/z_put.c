/* Puts one value (with an encoding and an attachment) without declaring a publisher. */
#include "common.h"

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/weft-pico-put", "Put from weft-pico!", 1, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_put_options_t options;
    z_put_options_default(&options);
    z_owned_encoding_t encoding;
    z_encoding_from_str(&encoding, "text/plain");
    options.encoding = z_move(encoding);
    z_owned_bytes_t attachment;
    z_bytes_from_static_str(&attachment, "weft");
    options.attachment = z_move(attachment);
    z_owned_bytes_t payload;
    z_bytes_from_static_str(&payload, a.value);
    printf("Putting Data ('%s': '%s')...\n", a.key, a.value);
    if (z_put(z_loan(s), z_loan(ke), z_move(payload), &options) < 0) printf("Put failed\n");
    z_drop(z_move(s));
    return 0;
}
