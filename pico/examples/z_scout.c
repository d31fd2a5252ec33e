/* Scouts for routers and peers on the multicast locator (-e, default udp/224.0.0.224:7446). */
#include "common.h"

static void on_hello(z_loaned_hello_t *hello, void *ctx) {
    z_view_string_t role;
    z_owned_string_t zid;
    z_id_t id = z_hello_zid(hello);
    const z_loaned_string_array_t *locs = zp_hello_locators(hello);
    (void)ctx;
    z_whatami_to_view_string(z_hello_whatami(hello), &role);
    z_id_to_string(&id, &zid);
    printf("Hello { zid: %.*s, whatami: %.*s, locators: [", (int)z_string_len(z_loan(zid)), z_string_data(z_loan(zid)),
           (int)z_string_len(z_loan(role)), z_string_data(z_loan(role)));
    for (size_t i = 0; i < z_string_array_len(locs); i++) {
        const z_loaned_string_t *l = z_string_array_get(locs, i);
        printf("%s\"%.*s\"", i > 0 ? ", " : "", (int)z_string_len(l), z_string_data(l));
    }
    printf("] }\n");
    z_drop(z_move(zid));
}

int main(int argc, char **argv) {
#if Z_FEATURE_SCOUTING == 1
    example_args_t a = {Z_CONFIG_MULTICAST_LOCATOR_DEFAULT, "client", NULL, NULL, 0, 0};
    example_args(argc, argv, &a);
    z_owned_config_t config;
    z_config_default(&config);
    zp_config_insert(z_loan_mut(config), Z_CONFIG_MULTICAST_LOCATOR_KEY, a.locator);
    z_owned_closure_hello_t callback;
    z_closure(&callback, on_hello, NULL, NULL);
    printf("Scouting on %s...\n", a.locator);
    return z_scout(z_move(config), z_move(callback), NULL) < 0 ? -1 : 0;
#else
    (void)argc;
    (void)argv;
    printf("z_scout needs Z_FEATURE_SCOUTING = 1\n");
    return -2;
#endif
}
