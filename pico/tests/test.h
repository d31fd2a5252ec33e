/*
 * Minimal test support: named cases in a TEST_LIST, assertions that print
 * the failing expression, and a runner that ends with "N passed, N failed".
 */
#ifndef WEFT_PICO_TEST_H
#define WEFT_PICO_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int _t_failed_now;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            _t_failed_now = 1;                                                   \
            return;                                                              \
        }                                                                        \
    } while (0)

#define CHECK_EQ(a, b)                                                                     \
    do {                                                                                   \
        long long _a = (long long)(a), _b = (long long)(b);                                \
        if (_a != _b) {                                                                    \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
                    #a, _a, #b, _b);                                                       \
            _t_failed_now = 1;                                                             \
            return;                                                                        \
        }                                                                                  \
    } while (0)

#define CHECK_MEM(a, b, n)                                                                \
    do {                                                                                  \
        if (memcmp((a), (b), (n)) != 0) {                                                 \
            fprintf(stderr, "  %s:%d: bytes of %s differ from %s\n", __FILE__, __LINE__, #a, #b); \
            _t_failed_now = 1;                                                            \
            return;                                                                       \
        }                                                                                 \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case_t;

#define TEST_LIST static const test_case_t test_list[]

static inline int test_run_all(const test_case_t *cases) {
    int passed = 0, failed = 0;
    for (const test_case_t *c = cases; c->name != NULL; c++) {
        _t_failed_now = 0;
        c->fn();
        printf("%s %s\n", _t_failed_now ? "FAIL" : "ok  ", c->name);
        if (_t_failed_now)
            failed++;
        else
            passed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

#endif
