/* Prints this session's ZenohID and the router's. */
#include "common.h"

static void print_zid(const z_id_t *id, void *ctx) {
    z_owned_string_t str;
    z_id_to_string(id, &str);
    printf("%s %.*s\n", (const char *)ctx, (int)z_string_len(z_loan(str)), z_string_data(z_loan(str)));
    z_drop(z_move(str));
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", NULL, NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_id_t self_id = z_info_zid(z_loan(s));
    print_zid(&self_id, (void *)"own id:");
    z_owned_closure_zid_t callback;
    z_closure(&callback, print_zid, NULL, (void *)"router id:");
    z_info_routers_zid(z_loan(s), z_move(callback));
    z_owned_closure_zid_t peers;
    z_closure(&peers, print_zid, NULL, (void *)"peer id:");
    z_info_peers_zid(z_loan(s), z_move(peers));
    z_drop(z_move(s));
    return 0;
}
