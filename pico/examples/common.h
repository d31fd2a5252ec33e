/* Shared argument parsing for the examples: -e LOCATOR -m MODE -k KEY -v VALUE -n COUNT -s SIZE. */
#ifndef WEFT_PICO_EXAMPLES_COMMON_H
#define WEFT_PICO_EXAMPLES_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zenoh-pico.h"

typedef struct {
    const char *locator, *mode, *key, *value;
    int count, size;
} example_args_t;

static inline void example_args(int argc, char **argv, example_args_t *a) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *v = argv[i + 1];
        if (strcmp(argv[i], "-e") == 0) a->locator = v;
        if (strcmp(argv[i], "-m") == 0) a->mode = v;
        if (strcmp(argv[i], "-k") == 0) a->key = v;
        if (strcmp(argv[i], "-v") == 0) a->value = v;
        if (strcmp(argv[i], "-n") == 0) a->count = atoi(v);
        if (strcmp(argv[i], "-s") == 0) a->size = atoi(v);
    }
}

/* The integer value of option `flag` (e.g. "-t"), or `def` when absent. */
static inline long example_opt(int argc, char **argv, const char *flag, long def) {
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], flag) == 0) return atol(argv[i + 1]);
    return def;
}

/* Opens a session on a->locator in a->mode; returns 0 on success. */
static inline int example_open(z_owned_session_t *s, const example_args_t *a) {
    z_owned_config_t config;
    z_config_default(&config);
    zp_config_insert(z_loan_mut(config), Z_CONFIG_MODE_KEY, a->mode);
    zp_config_insert(z_loan_mut(config), Z_CONFIG_CONNECT_KEY, a->locator);
    printf("Opening session to %s...\n", a->locator);
    if (z_open(s, z_move(config), NULL) < 0) {
        printf("Unable to open session!\n");
        return -1;
    }
    return 0;
}

#endif
