/*
 * Codec unit tests: zint table, spec examples decoded field by field,
 * hostile lengths (zid length > 16, lengths beyond the buffer), every
 * truncation of valid messages, unknown extensions, and the window writer
 * used by the fragmenter.
 */
#include <stdlib.h>
#include <string.h>

#include "../src/codec/msg.h"
#include "test.h"

static size_t unhex(const char *h, uint8_t *out) {
    size_t n = 0;
    while (h[0] && h[1]) {
        if (h[0] == ' ') {
            h++;
            continue;
        }
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (uint8_t)v;
        h += 2;
    }
    return n;
}

static void test_zint_table(void) {
    struct { uint64_t v; const char *hex; } t[] = {
        {0, "00"}, {127, "7f"}, {128, "8001"}, {300, "ac02"}, {16383, "ff7f"}, {16384, "808001"},
        {65535, "ffff03"}, {100000, "a08d06"}, {126594754, "c2ddae3c"}, {(1ull << 28) - 1, "ffffff7f"},
        {0xffffffffull, "ffffffff0f"}, {(1ull << 56) - 1, "ffffffffffffff7f"},
        {1ull << 56, "808080808080808001"}, {1ull << 63, "808080808080808080"}, {~0ull, "ffffffffffffffffff"},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        uint8_t exp[16], out[16];
        size_t n = unhex(t[i].hex, exp);
        _zw_t w;
        _zw_init(&w, out, sizeof(out));
        CHECK_EQ(_zw_zint(&w, t[i].v), Z_OK);
        CHECK_EQ(w.pos, n);
        CHECK_MEM(out, exp, n);
        CHECK_EQ(_z_zint_len(t[i].v), n);
        _zr_t r;
        uint64_t v;
        _zr_init(&r, exp, n);
        CHECK_EQ(_zr_zint(&r, &v), Z_OK);
        CHECK(v == t[i].v);
        CHECK_EQ(_zr_left(&r), 0);
    }
}

static void test_zint_bounds(void) {
    uint8_t b[] = {0xff, 0xff, 0x03}; /* 65535 */
    uint8_t big[] = {0x80, 0x80, 0x04}; /* 65536 */
    _zr_t r;
    uint16_t v16;
    _zr_init(&r, b, 3);
    CHECK_EQ(_zr_z16(&r, &v16), Z_OK);
    CHECK_EQ(v16, 65535);
    _zr_init(&r, big, 3);
    CHECK_EQ(_zr_z16(&r, &v16), Z_EDESERIALIZE);
    uint8_t trunc[] = {0x80, 0x80};
    uint64_t v;
    _zr_init(&r, trunc, 2);
    CHECK_EQ(_zr_zint(&r, &v), Z_EDESERIALIZE);
}

static void test_frame_example(void) {
    uint8_t b[64];
    size_t n = unhex("258ee384065d0101 0568656c6c6f", b);
    _zr_t r;
    _z_tmsg_t t;
    _z_nmsg_t m;
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_OK);
    CHECK_EQ(t.id, _Z_T_FRAME);
    CHECK(t.m.frame.reliable);
    CHECK_EQ(t.m.frame.sn, 12661134);
    CHECK(_z_frame_more(&r));
    CHECK_EQ(_z_network_decode(&r, &m), Z_OK);
    CHECK_EQ(m.id, _Z_N_PUSH);
    CHECK_EQ(m.m.push.key.scope, 1);
    CHECK(m.m.push.key.sender_mapping);
    CHECK(m.m.push.key.suffix == NULL);
    CHECK_EQ(m.m.push.body.id, _Z_Z_PUT);
    CHECK_EQ(m.m.push.body.payload.len, 5);
    CHECK_MEM(m.m.push.body.payload.ptr, "hello", 5);
    CHECK(!_z_frame_more(&r));
}

static void test_put_with_encoding_and_attachment(void) {
    /* Push(scope 0, "demo/b") Put E=text/plain, Attachment "meta", payload "text" */
    uint8_t b[64], out[64];
    size_t n = unhex("7d000664656d6f2f62 c10843046d657461 0474657874", b);
    _zr_t r;
    _z_nmsg_t m;
    _zr_init(&r, b, n);
    CHECK_EQ(_z_network_decode(&r, &m), Z_OK);
    CHECK_EQ(_zr_left(&r), 0);
    CHECK(m.m.push.body.has_enc);
    CHECK_EQ(m.m.push.body.enc.id, 4);
    CHECK(m.m.push.body.has_att);
    CHECK_MEM(m.m.push.body.att.ptr, "meta", 4);
    CHECK_MEM(m.m.push.body.payload.ptr, "text", 4);
    _zw_t w;
    _zw_init(&w, out, sizeof(out));
    CHECK_EQ(_z_network_encode(&w, &m), Z_OK);
    CHECK_EQ(w.pos, n);
    CHECK_MEM(out, b, n);
}

static void test_zid_length_over_16_rejected(void) {
    /* Timestamp inside a Put: zid length byte 17 (> 16) with enough bytes after it. */
    uint8_t b[64];
    memset(b, 0xaa, sizeof(b));
    size_t n = unhex("21 b0d6f385df8697816b 11", b);
    _zr_t r;
    _z_data_t d;
    _zr_init(&r, b, n + 30);
    CHECK_EQ(_z_data_read(&r, &d), Z_EDESERIALIZE);
    /* zid length 0 */
    n = unhex("21 01 00 00", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_data_read(&r, &d), Z_EDESERIALIZE);
}

static void test_lengths_beyond_buffer_rejected(void) {
    uint8_t b[16];
    _zr_t r;
    _z_data_t d;
    _z_tmsg_t t;
    /* Put payload length 100 with 3 bytes left */
    size_t n = unhex("01 64 616263", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_data_read(&r, &d), Z_EDESERIALIZE);
    /* InitAck announcing a 16-byte zid with 4 bytes present */
    n = unhex("61 09 f0 01020304", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_EDESERIALIZE);
    /* ZBuf extension longer than the buffer */
    n = unhex("84 42 7f 0102", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_EDESERIALIZE);
    /* zint longer than the buffer */
    n = unhex("25 ffffff", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_EDESERIALIZE);
    /* wrong protocol version */
    n = unhex("01 08 32 01020304", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_EDESERIALIZE);
}

static void test_extensions(void) {
    uint8_t b[32], out[32];
    _zr_t r;
    _z_tmsg_t t;
    _zw_t w;
    /* KeepAlive with an unknown non-mandatory Z64 extension (id 9): kept and re-encoded */
    size_t n = unhex("84 29 05", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_OK);
    CHECK_EQ(t.kept.n, 1);
    _zw_init(&w, out, sizeof(out));
    CHECK_EQ(_z_transport_encode(&w, &t), Z_OK);
    CHECK_EQ(w.pos, n);
    CHECK_MEM(out, b, n);
    /* unknown mandatory extension: rejected */
    n = unhex("84 39 05", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_EDESERIALIZE);
    /* reserved extension encoding 0b11: rejected */
    n = unhex("84 61 05", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_transport_decode(&r, &t), Z_EDESERIALIZE);
    /* NodeId (mandatory) is understood in a Push */
    n = unhex("9d 00 33 07 01 00", b);
    _z_nmsg_t m;
    _zr_init(&r, b, n);
    CHECK_EQ(_z_network_decode(&r, &m), Z_OK);
    CHECK(m.ext.has_nodeid);
    CHECK_EQ(m.ext.nodeid, 7);
}

/* Every strict prefix of valid messages must be rejected or decode within bounds. */
static void test_every_truncation(void) {
    const char *msgs[] = {
        "6109f051d78f4f879ab921e13e97187cc9078c0a00c021 20bc7e0510a18db032904bb4a56e63d5aefc2eb23c3cd3e41936ed88b81ea27233",
        "fb0100066465 6d6f2f71a10d4312f0 0e5848a5d9d3a0c56db98d0f4e1b8e82 06 0401 06616e73776572",
        "fc0100066465 6d6f2f71a10d26b817 2303",
        "3d01022f61 21 b0d6f385df8697816b 10 0e5848a5d9d3a0c56db98d0f4e1b8e82 0568656c6c6f",
        "be012108 6601000b70726f62652f616c697665",
        "87015f020000",
    };
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
        uint8_t full[256];
        size_t n = unhex(msgs[i], full);
        for (size_t k = 0; k < n; k++) {
            uint8_t *b = malloc(k > 0 ? k : 1); /* exact size: ASan catches any over-read */
            memcpy(b, full, k);
            _zr_t r;
            _zr_init(&r, b, k);
            uint8_t h = full[0];
            if (_z_is_network_header(h)) {
                _z_nmsg_t m;
                (void)_z_network_decode(&r, &m);
            } else if ((h & 0x1f) <= 0x07 && (h & 0x1f) != 0 && h != 0x87) {
                _z_tmsg_t t;
                (void)_z_transport_decode(&r, &t);
            } else {
                _z_decl_t d;
                (void)_z_decl_read(&r, &d);
            }
            CHECK(r.pos <= k);
            free(b);
        }
    }
}

static void test_window_writer(void) {
    /* a Push with a 1000-byte payload, re-encoded in windows of 97 bytes */
    static uint8_t payload[1000], full[1100], pieces[1100];
    for (size_t i = 0; i < sizeof(payload); i++) payload[i] = (uint8_t)(i * 7);
    _z_nmsg_t m;
    memset(&m, 0, sizeof(m));
    m.id = _Z_N_PUSH;
    m.m.push.key.suffix = "demo/big";
    m.m.push.key.suffix_len = 8;
    m.m.push.body.id = _Z_Z_PUT;
    m.m.push.body.payload.ptr = payload;
    m.m.push.body.payload.len = sizeof(payload);
    _zw_t w;
    _zw_init(&w, full, sizeof(full));
    CHECK_EQ(_z_network_encode(&w, &m), Z_OK);
    size_t total = w.pos, off = 0;
    _zw_counter(&w);
    CHECK_EQ(_z_network_encode(&w, &m), Z_OK);
    CHECK_EQ(w.pos, total);
    while (off < total) {
        size_t chunk = total - off < 97 ? total - off : 97;
        _zw_init(&w, pieces + off, chunk);
        w.skip = off;
        z_result_t res = _z_network_encode(&w, &m);
        CHECK(res == Z_OK || res == Z_ENOSPACE);
        off += chunk;
    }
    CHECK_MEM(pieces, full, total);
}

static void test_scouting(void) {
    uint8_t b[80];
    _zr_t r;
    _z_smsg_t m;
    size_t n = unhex("010903", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_scouting_decode(&r, &m), Z_OK);
    CHECK_EQ(m.id, _Z_S_SCOUT);
    CHECK_EQ(m.what, 3); /* router | peer */
    CHECK(!m.has_zid);
    n = unhex("2209f0301693cc50f28d8c90c737b9e65a089301137463702f3132372e302e302e313a3137343437", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_scouting_decode(&r, &m), Z_OK);
    CHECK_EQ(m.id, _Z_S_HELLO);
    CHECK_EQ(m.what, _Z_WAI_ROUTER);
    CHECK_EQ(m.zid.len, 16);
    CHECK_EQ(m.nloc, 1);
    CHECK_EQ(m.locators.len, 20);
    CHECK_MEM(m.locators.ptr + 1, "tcp/127.0.0.1:17447", 19);
    /* a locator count larger than what follows */
    n = unhex("2209f0301693cc50f28d8c90c737b9e65a0893 05 03616263", b);
    _zr_init(&r, b, n);
    CHECK_EQ(_z_scouting_decode(&r, &m), Z_EDESERIALIZE);
}

TEST_LIST = {
    {"zint table (spec 2.2)", test_zint_table},
    {"bounded zints and truncated zints", test_zint_bounds},
    {"Frame + Push example (spec 6.5)", test_frame_example},
    {"Put with encoding and attachment round-trips", test_put_with_encoding_and_attachment},
    {"ZenohID length > 16 or 0 is rejected", test_zid_length_over_16_rejected},
    {"lengths beyond the buffer are rejected", test_lengths_beyond_buffer_rejected},
    {"unknown, mandatory and reserved extensions", test_extensions},
    {"every truncation of valid messages stays in bounds", test_every_truncation},
    {"window writer slices equal the full encoding", test_window_writer},
    {"Scout and Hello (vector 07) field by field", test_scouting},
    {NULL, NULL},
};

int main(void) { return test_run_all(test_list); }
