/*
 * The firmware examples: Zenoh-Pico's z_pub, z_sub, z_get, z_queryable and
 * z_liveliness in the single-threaded run model (the application calls
 * zp_spin_once), with the POSIX examples' options, baked in at build time:
 *   -e LOCATOR (default serial/uart0#baudrate=115200) -k KEY -v VALUE
 *   -n COUNT -i INTERVAL_MS -t TIMEOUT_MS
 * Each prints one line per event on the console and returns 0 on success.
 */
#ifndef WEFT_PICO_BOARDS_APP_H
#define WEFT_PICO_BOARDS_APP_H

#include <string.h>

#include "../common/console.h"
#include "zenoh-pico.h"

int app_main(int argc, const char *const *argv);

/* True if a and b are the same string (the C library's strcmp is large on a microcontroller). */
static inline bool app_streq(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* The value of option `flag`, or `def`. */
static inline const char *app_opt(int argc, const char *const *argv, const char *flag, const char *def) {
    for (int i = 1; i + 1 < argc; i += 2)
        if (app_streq(argv[i], flag)) return argv[i + 1];
    return def;
}

/* The decimal value of option `flag`, or `def`. */
static inline long app_num(int argc, const char *const *argv, const char *flag, long def) {
    const char *v = app_opt(argc, argv, flag, NULL);
    if (v == NULL) return def;
    long n = 0;
    for (; *v >= '0' && *v <= '9'; v++) n = n * 10 + (*v - '0');
    return n;
}

/* Opens a client session on -e; prints OPEN or the error. */
static inline int app_open(z_owned_session_t *s, int argc, const char *const *argv) {
    z_owned_config_t config;
    z_config_default(&config);
    const char *loc = app_opt(argc, argv, "-e", "serial/uart0#baudrate=115200");
    zp_config_insert(z_config_loan_mut(&config), Z_CONFIG_CONNECT_KEY, loc);
    z_result_t res = z_open(s, z_config_move(&config), NULL);
    if (res != Z_OK) {
        con_str("OPEN FAILED ");
        con_int(res);
        con_nl();
        return -1;
    }
    con_str("OPEN ");
    con_str(loc);
    con_nl();
    return 0;
}

/* Spins the session for `ms` milliseconds, or until *done. */
static inline void app_spin(z_owned_session_t *s, uint32_t ms, const volatile int *done) {
    z_clock_t start = z_clock_now();
    while ((done == NULL || !*done) && z_clock_elapsed_ms(&start) < ms) zp_spin_once(z_session_loan(s));
}

#endif
