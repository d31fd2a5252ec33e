/*
 * Checked byte reader and bounded byte writer.
 *
 * Every decoder reads wire input only through _zr_* functions. Each one
 * checks the bytes that remain before touching them and returns an error
 * instead of reading past the end; nothing here asserts on wire input.
 */
#ifndef WEFT_PICO_CODEC_RW_H
#define WEFT_PICO_CODEC_RW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zenoh-pico/api/result.h"

/* A read cursor over a byte range that it does not own. */
typedef struct {
    const uint8_t *p;
    size_t len;
    size_t pos;
    z_result_t err; /* Z_EDESERIALIZE once a read failed (see _zr_fail) */
} _zr_t;

/*
 * A write cursor over a fixed buffer that it does not own.
 *
 * `pos` counts every byte emitted. Only the bytes whose position lies in the
 * window [skip, skip + cap) are stored (at p[pos - skip]); emitting past the
 * window end fails with Z_ENOSPACE. With p == NULL nothing is stored: the
 * writer only measures. The window lets the fragmenter re-encode a large
 * message slice by slice without a second copy of it.
 */
typedef struct {
    uint8_t *p;
    size_t cap;
    size_t pos;
    size_t skip;
    z_result_t err; /* the first error; every write after it does nothing and returns it */
    uint8_t exts; /* extensions of the chain being written still to come (msg.h) */
} _zw_t;

static inline void _zr_init(_zr_t *r, const uint8_t *p, size_t len) {
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->err = Z_OK;
}
static inline size_t _zr_left(const _zr_t *r) { return r->len - r->pos; }
static inline const uint8_t *_zr_here(const _zr_t *r) { return r->p + r->pos; }

/*
 * A failed read fails the reader: err is set and the position goes to the
 * end, so that every later read fails too and yields zeros (an empty view
 * for bytes). A decoder may thus read field after field and look at the
 * result once, at its end (err, or its last read's result); it records its
 * own verdicts (a bad value) with _zr_fail as well. A read that cannot fail
 * once err is set (a view on 0 bytes) returns err too.
 */
z_result_t _zr_fail(_zr_t *r);
/* Reads one byte. */
z_result_t _zr_u8(_zr_t *r, uint8_t *out);
/* Returns the next byte without consuming it (at the end: an error, but the reader is not failed). */
z_result_t _zr_peek(const _zr_t *r, uint8_t *out);
/* Reads a zint (1..9 bytes) into a u64. */
z_result_t _zr_zint(_zr_t *r, uint64_t *out);
/* Reads a zint that must be <= max. */
z_result_t _zr_zbound(_zr_t *r, uint64_t max, uint64_t *out);
/* Reads a u16 zint / u32 zint. */
z_result_t _zr_z16(_zr_t *r, uint16_t *out);
z_result_t _zr_z32(_zr_t *r, uint32_t *out);
/* Returns a view on the next n bytes and consumes them. */
z_result_t _zr_take(_zr_t *r, size_t n, const uint8_t **out);
/* Reads a zint length (<= max) and a view on that many bytes. */
z_result_t _zr_lbytes(_zr_t *r, size_t max, const uint8_t **out, size_t *len);
/* Skips n bytes. */
z_result_t _zr_skip(_zr_t *r, size_t n);

static inline void _zw_init(_zw_t *w, uint8_t *p, size_t cap) {
    w->p = p;
    w->cap = cap;
    w->pos = 0;
    w->skip = 0;
    w->err = Z_OK;
}
/* A writer that only counts. */
static inline void _zw_counter(_zw_t *w) { _zw_init(w, NULL, (size_t)-1); }

/* The writers return the writer's error (err): an encoder may write field
 * after field and check once, at its end. */
z_result_t _zw_u8(_zw_t *w, uint8_t v);
z_result_t _zw_zint(_zw_t *w, uint64_t v);
z_result_t _zw_bytes(_zw_t *w, const uint8_t *src, size_t n);
/* Writes a zint length then the bytes. */
z_result_t _zw_lbytes(_zw_t *w, const uint8_t *src, size_t n);
/* Number of bytes the zint encoding of v takes. */
size_t _z_zint_len(uint64_t v);

#define _Z_TRY(expr)                    \
    do {                                \
        z_result_t _zres_ = (expr);     \
        if (_zres_ != Z_OK) return _zres_; \
    } while (0)

#endif
