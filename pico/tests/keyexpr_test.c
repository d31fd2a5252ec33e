/* Key expressions: the validity, intersection and inclusion tables of spec section 13. */
#include <string.h>

#include "../src/keyexpr/keyexpr.h"
#include "test.h"

static bool valid(const char *k) { return _z_ke_check(k, strlen(k)) == Z_OK; }
static bool inter(const char *a, const char *b) { return _z_ke_intersects(a, strlen(a), b, strlen(b)); }
static bool incl(const char *a, const char *b) { return _z_ke_includes(a, strlen(a), b, strlen(b)); }

static void test_valid(void) {
    const char *ok[] = {"a/b", "a/*/c", "a/**", "**", "a$*b", "a/b$*c$*d", "@a/b", "a/ b", "a/*/*/**", "demo/example/**"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (!valid(ok[i])) fprintf(stderr, "  should be valid: %s\n", ok[i]);
        CHECK(valid(ok[i]));
    }
}

static void test_invalid(void) {
    const char *bad[] = {"a/b*", "$*", "a/$*", "a//b", "/a", "a/", "", "a#b", "a?b", "a$", "a$*$*", "*$*",
                         "a/**/**", "a/**/*", "**/**"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (valid(bad[i])) fprintf(stderr, "  should be invalid: '%s'\n", bad[i]);
        CHECK(!valid(bad[i]));
    }
}

static void test_intersects(void) {
    struct { const char *a, *b; bool r; } t[] = {
        {"demo/**", "demo/a", true}, {"demo/**", "demo", true}, {"demo/*", "demo", false},
        {"demo/*", "demo/a/b", false}, {"a/*/c", "*/b/*", true}, {"a/b$*", "a/bcd", true},
        {"a/$*d", "a/b$*", true}, {"x/c$*", "x/abc$*", false}, {"a/**/c", "a/c", true},
        {"a/b/**", "a/*/c", true}, {"a/**", "b/**", false}, {"**", "@a/b", false}, {"**", "a/@b", false},
        {"*/b", "@a/b", false}, {"@a/*", "@a/@b", false}, {"@a/**", "@a", true}, {"**/@a", "@a", true},
        {"h7/$*x/**", "h7/ax/y/1", true}, {"h7/$*x/**", "h7/x/y", true}, {"@hidden/**", "@hidden/x/y", true},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (inter(t[i].a, t[i].b) != t[i].r) fprintf(stderr, "  intersect(%s, %s) != %d\n", t[i].a, t[i].b, t[i].r);
        CHECK(inter(t[i].a, t[i].b) == t[i].r);
        CHECK(inter(t[i].b, t[i].a) == t[i].r);
    }
}

static void test_includes(void) {
    struct { const char *a, *b; bool r; } t[] = {
        {"demo/**", "demo/a", true}, {"demo/**", "demo", true}, {"demo/a", "demo/**", false},
        {"a/*/**", "a/b/**", true}, {"a/*", "a/b$*", true}, {"a/b$*", "a/bc", true}, {"a/$*b", "a/*", false},
        {"*", "a/b", false}, {"a/**", "a/@b", false}, {"**", "@a", false}, {"a/b", "a/b", true},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (incl(t[i].a, t[i].b) != t[i].r) fprintf(stderr, "  includes(%s, %s) != %d\n", t[i].a, t[i].b, t[i].r);
        CHECK(incl(t[i].a, t[i].b) == t[i].r);
    }
}

static void test_hostile_patterns_are_bounded(void) {
    char a[200], b[200];
    for (int i = 0; i < 99; i++) {
        a[2 * i] = '$';
        a[2 * i + 1] = '*';
        b[2 * i] = 'x';
        b[2 * i + 1] = 'y';
    }
    a[198] = 'q';
    b[198] = 'z';
    /* must return (either way) in bounded time */
    (void)_z_ke_intersects(a, 199, b, 199);
    (void)_z_ke_includes(a, 199, b, 199);
    CHECK(!inter("a/b", "a/c"));
}

TEST_LIST = {
    {"valid canonical key expressions", test_valid},
    {"invalid or non-canonical key expressions", test_invalid},
    {"intersection table (spec 13.3)", test_intersects},
    {"inclusion table (spec 13.4)", test_includes},
    {"hostile $* patterns stay bounded", test_hostile_patterns_are_bounded},
    {NULL, NULL},
};

int main(void) { return test_run_all(test_list); }
