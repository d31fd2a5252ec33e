/*
 * Public API without a router, written in C99 with the typed calls
 * (z_X_loan, z_X_move, z_X_drop): configuration, key expressions, bytes and
 * the block pool, encodings, closures, ids, and z_open failures.
 */
#include <string.h>

#include "test.h"
#include "zenoh-pico.h"

static void test_config(void) {
    z_owned_config_t c;
    CHECK_EQ(z_config_default(&c), Z_OK);
    CHECK(strcmp(zp_config_get(z_config_loan(&c), Z_CONFIG_MODE_KEY), "client") == 0);
    CHECK_EQ(zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_MODE_KEY, "peer"), Z_OK);
    CHECK_EQ(zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_MODE_KEY, "router"), Z_ECONFIG);
    CHECK_EQ(zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_CONNECT_KEY, "tcp/127.0.0.1:7447"), Z_OK);
    CHECK(strcmp(zp_config_get(z_config_loan(&c), Z_CONFIG_CONNECT_KEY), "tcp/127.0.0.1:7447") == 0);
    char longloc[200];
    memset(longloc, 'a', sizeof(longloc) - 1);
    longloc[sizeof(longloc) - 1] = 0;
    CHECK_EQ(zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_CONNECT_KEY, longloc), Z_ENOSPACE);
    CHECK_EQ(zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_MULTICAST_SCOUTING_KEY, "false"), Z_OK);
    z_config_drop(z_config_move(&c));
}

static void test_open_failures(void) {
    z_owned_config_t c;
    z_owned_session_t s;
    /* nothing listens there: fails, and frees its session slot each time */
    for (int i = 0; i < ZP_MAX_SESSIONS + 2; i++) {
        z_config_default(&c);
        zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_CONNECT_KEY, "tcp/127.0.0.1:17599");
        CHECK_EQ(z_open(&s, z_config_move(&c), NULL), Z_EOPEN);
        CHECK(!z_internal_session_check(&s));
    }
    z_config_default(&c);
    zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_CONNECT_KEY, "bogus/1.2.3.4:5");
    CHECK_EQ(z_open(&s, z_config_move(&c), NULL), Z_ECONFIG);
    z_config_default(&c);
    zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_MODE_KEY, "peer");
    zp_config_insert(z_config_loan_mut(&c), Z_CONFIG_CONNECT_KEY, "tcp/127.0.0.1:17599");
    CHECK_EQ(z_open(&s, z_config_move(&c), NULL), Z_ECONFIG); /* peers use a multicast group */
}

static void test_keyexpr(void) {
    z_view_keyexpr_t a, b;
    z_owned_keyexpr_t owned;
    CHECK_EQ(z_view_keyexpr_from_str(&a, "demo/**"), Z_OK);
    CHECK_EQ(z_view_keyexpr_from_str(&b, "demo/a/b"), Z_OK);
    CHECK(z_keyexpr_intersects(z_view_keyexpr_loan(&a), z_view_keyexpr_loan(&b)));
    CHECK(z_keyexpr_includes(z_view_keyexpr_loan(&a), z_view_keyexpr_loan(&b)));
    CHECK(!z_keyexpr_includes(z_view_keyexpr_loan(&b), z_view_keyexpr_loan(&a)));
    CHECK(z_view_keyexpr_from_str(&b, "demo//x") < 0);
    CHECK(z_view_keyexpr_from_str(&b, "demo/**/*") < 0);
    CHECK_EQ(z_keyexpr_from_str(&owned, "demo/a/b"), Z_OK);
    z_view_keyexpr_from_str_unchecked(&b, "demo/a/b");
    CHECK(z_keyexpr_equals(z_keyexpr_loan(&owned), z_view_keyexpr_loan(&b)));
    z_view_string_t str;
    z_keyexpr_as_view_string(z_keyexpr_loan(&owned), &str);
    CHECK_EQ(z_string_len(z_view_string_loan(&str)), 8);
    z_keyexpr_drop(z_keyexpr_move(&owned));
    CHECK(!z_internal_keyexpr_check(&owned));
}

static void test_bytes_and_pool(void) {
    z_owned_bytes_t b[ZP_POOL_BLOCKS + 1];
    uint8_t data[16] = {1, 2, 3, 4, 5};
    for (int i = 0; i < ZP_POOL_BLOCKS; i++) CHECK_EQ(z_bytes_copy_from_buf(&b[i], data, 5), Z_OK);
#if ZP_MALLOC == 0
    CHECK_EQ(z_bytes_copy_from_buf(&b[ZP_POOL_BLOCKS], data, 5), Z_ENOMEM); /* pool exhausted */
#endif
    z_bytes_drop(z_bytes_move(&b[0]));
    CHECK_EQ(z_bytes_copy_from_buf(&b[0], data, 5), Z_OK); /* a dropped block is reused */
    CHECK_EQ(z_bytes_len(z_bytes_loan(&b[0])), 5);
    z_bytes_reader_t r = z_bytes_get_reader(z_bytes_loan(&b[0]));
    uint8_t out[8];
    CHECK_EQ(z_bytes_reader_read(&r, out, 3), 3);
    CHECK_EQ(z_bytes_reader_remaining(&r), 2);
    CHECK_EQ(z_bytes_reader_read(&r, out + 3, 8), 2);
    CHECK_MEM(out, data, 5);
    for (int i = 0; i < ZP_POOL_BLOCKS; i++) z_bytes_drop(z_bytes_move(&b[i]));
#if ZP_MALLOC == 0
    static uint8_t big[ZP_POOL_BLOCK_SIZE + 1];
    CHECK_EQ(z_bytes_copy_from_buf(&b[0], big, sizeof(big)), Z_ENOMEM); /* larger than a block */
#endif
    z_owned_bytes_t s;
    z_owned_string_t str;
    z_bytes_from_static_str(&s, "hello");
    CHECK_EQ(z_bytes_to_string(z_bytes_loan(&s), &str), Z_OK);
    CHECK(strcmp(z_string_data(z_string_loan(&str)), "hello") == 0);
    z_string_drop(z_string_move(&str));
    z_bytes_drop(z_bytes_move(&s));
}

static int deleted;
static void deleter(void *data, void *ctx) {
    (void)data;
    (void)ctx;
    deleted++;
}

static void test_ownership(void) {
    static uint8_t buf[4];
    z_owned_bytes_t b, c;
    deleted = 0;
    z_bytes_from_buf(&b, buf, sizeof(buf), deleter, NULL);
    z_bytes_take(&c, z_bytes_move(&b));
    CHECK(!z_internal_bytes_check(&b));
    z_bytes_drop(z_bytes_move(&b)); /* dropping a moved-from value does nothing */
    CHECK_EQ(deleted, 0);
    z_bytes_drop(z_bytes_move(&c));
    CHECK_EQ(deleted, 1);
    z_bytes_drop(z_bytes_move(&c)); /* double drop is harmless */
    CHECK_EQ(deleted, 1);
}

static void test_encoding(void) {
    z_owned_encoding_t e, f;
    z_owned_string_t s;
    CHECK_EQ(z_encoding_from_str(&e, "text/plain;utf-8"), Z_OK);
    CHECK_EQ(z_encoding_loan(&e)->_id, 4);
    CHECK_EQ(z_encoding_to_string(z_encoding_loan(&e), &s), Z_OK);
    CHECK(strcmp(z_string_data(z_string_loan(&s)), "text/plain;utf-8") == 0);
    z_string_drop(z_string_move(&s));
    CHECK(z_encoding_equals(z_encoding_text_plain(), z_encoding_text_plain()));
    CHECK(!z_encoding_equals(z_encoding_loan(&e), z_encoding_text_plain()));
    CHECK_EQ(z_encoding_from_str(&f, "my/custom;v1"), Z_OK);
    CHECK_EQ(z_encoding_loan(&f)->_id, 0xffff);
    z_encoding_drop(z_encoding_move(&e));
    z_encoding_drop(z_encoding_move(&f));
    CHECK_EQ(z_encoding_video_vp9()->_id, 52);
}

static int calls, drops;
static void on_sample(z_loaned_sample_t *s, void *ctx) {
    (void)s;
    calls += *(int *)ctx;
}
static void on_drop(void *ctx) {
    (void)ctx;
    drops++;
}

static void test_closures(void) {
    z_owned_closure_sample_t c;
    int step = 2;
    calls = drops = 0;
    z_closure_sample(&c, on_sample, on_drop, &step);
    z_closure_sample_call(z_closure_sample_loan(&c), NULL);
    CHECK_EQ(calls, 2);
    z_closure_sample_drop(z_closure_sample_move(&c));
    CHECK_EQ(drops, 1);
    CHECK(!z_internal_closure_sample_check(&c));
}

static void test_id_to_string(void) {
    /* spec 2.4: text 828e1b4e0f8db96dc5a0d3d9a548580e is sent as 0e 58 48 ... 82 */
    z_id_t id = {{0x0e, 0x58, 0x48, 0xa5, 0xd9, 0xd3, 0xa0, 0xc5, 0x6d, 0xb9, 0x8d, 0x0f, 0x4e, 0x1b, 0x8e, 0x82}};
    z_owned_string_t s;
    CHECK_EQ(z_id_to_string(&id, &s), Z_OK);
    CHECK(strcmp(z_string_data(z_string_loan(&s)), "828e1b4e0f8db96dc5a0d3d9a548580e") == 0);
    z_string_drop(z_string_move(&s));
    z_id_t small = {{0x01, 0x02, 0x03, 0x04}};
    CHECK_EQ(z_id_to_string(&small, &s), Z_OK);
    CHECK(strcmp(z_string_data(z_string_loan(&s)), "4030201") == 0);
    z_string_drop(z_string_move(&s));
}

TEST_LIST = {
    {"configuration keys", test_config},
    {"z_open failures release the session", test_open_failures},
    {"key expressions", test_keyexpr},
    {"bytes, reader and the block pool", test_bytes_and_pool},
    {"move, take, drop", test_ownership},
    {"encodings", test_encoding},
    {"closures", test_closures},
    {"ZenohID text form", test_id_to_string},
    {NULL, NULL},
};

int main(void) { return test_run_all(test_list); }
