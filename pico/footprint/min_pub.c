/* Footprint (a): the minimal publisher — open, declare publisher, put, close. */
#include "zenoh-pico.h"

int main(void) {
    z_owned_config_t config;
    z_owned_session_t s;
    z_owned_publisher_t pub;
    z_view_keyexpr_t ke;
    z_owned_bytes_t payload;
    z_config_default(&config);
    zp_config_insert(z_config_loan_mut(&config), Z_CONFIG_CONNECT_KEY, "tcp/192.168.1.10:7447");
    if (z_open(&s, z_config_move(&config), NULL) != Z_OK) return 1;
    z_view_keyexpr_from_str(&ke, "demo/example/pub");
    z_declare_publisher(z_session_loan(&s), &pub, z_view_keyexpr_loan(&ke), NULL);
    z_bytes_copy_from_str(&payload, "Pub from weft-pico!");
    z_publisher_put(z_publisher_loan(&pub), z_bytes_move(&payload), NULL);
    z_publisher_drop(z_publisher_move(&pub));
    z_session_drop(z_session_move(&s));
    return 0;
}
