/* Declares a publisher and puts a value every second. */
#include "common.h"

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/weft-pico-pub", "Pub from weft-pico!", 100, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_owned_publisher_t pub;
    if (z_declare_publisher(z_loan(s), &pub, z_loan(ke), NULL) < 0) {
        printf("Unable to declare publisher!\n");
        return -1;
    }
    char buf[256];
    for (int i = 0; i < a.count; i++) {
        z_sleep_s(1);
        snprintf(buf, sizeof(buf), "[%4d] %s", i, a.value);
        printf("Putting Data ('%s': '%s')...\n", a.key, buf);
        z_owned_bytes_t payload;
        z_bytes_copy_from_str(&payload, buf);
        z_publisher_put(z_loan(pub), z_move(payload), NULL);
    }
    z_drop(z_move(pub));
    z_drop(z_move(s));
    return 0;
}
