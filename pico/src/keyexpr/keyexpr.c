/*
 * Key expressions (spec section 13): chunks separated by '/', wildcards
 * `*` (one chunk), `**` (zero or more chunks), `$*` (inside a chunk), and
 * verbatim chunks starting with '@' that no wildcard matches.
 *
 * The matchers walk the strings in place (no allocation). Sub-chunk `$*`
 * matching is backtracking; a step budget bounds its cost on hostile input.
 */
#include "keyexpr.h"

#include <string.h>

typedef struct {
    const char *p;
    size_t len;
} _ke_t;

/* Length of the first chunk of k. */
static size_t _ke_chunk(_ke_t k) {
    const char *slash = memchr(k.p, '/', k.len);
    return slash != NULL ? (size_t)(slash - k.p) : k.len;
}

/* k without its first chunk (and separator). */
static _ke_t _ke_rest(_ke_t k) {
    size_t c = _ke_chunk(k);
    _ke_t r = {k.p + c, k.len - c};
    if (r.len > 0) {
        r.p++;
        r.len--;
    }
    return r;
}

/* Is p[0..len) the string literal lit? (its length from sizeof: no strlen) */
#define _ke_is(p, len, lit) ((len) == sizeof(lit) - 1 && memcmp((p), (lit), sizeof(lit) - 1) == 0)
static bool _ke_dstar(_ke_t k) { return _ke_is(k.p, _ke_chunk(k), "**"); }
static bool _ke_verbatim(_ke_t k) { return k.len > 0 && k.p[0] == '@'; }

/* One pass over the chunks (no chunk search per chunk): each is checked as it ends. */
z_result_t _z_ke_check(const char *s, size_t len) {
    if (s == NULL || len == 0) return Z_EINVAL;
    const char *end = s + len;
    bool prev_dstar = false;
    for (const char *p = s;;) {
        const char *q = p;
        while (q < end && *q != '/') q++;
        size_t c = (size_t)(q - p);
        bool star = c == 1 && p[0] == '*';
        bool dstar = c == 2 && p[0] == '*' && p[1] == '*';
        /* an empty chunk ('/' first, last or doubled), ** then ** or *, a lone $* (written *) */
        if (c == 0 || (prev_dstar && (star || dstar)) || (c == 2 && p[0] == '$' && p[1] == '*')) return Z_EINVAL;
        for (size_t i = 0; i < c && !star && !dstar; i++) {
            char ch = p[i];
            if (ch == '#' || ch == '?') return Z_EINVAL;
            if (ch == '*' && (i == 0 || p[i - 1] != '$')) return Z_EINVAL; /* * inside a chunk: only in $* */
            if (ch == '$' && (i + 1 >= c || p[i + 1] != '*' || (i + 2 < c && p[i + 2] == '$'))) return Z_EINVAL;
        }
        prev_dstar = dstar;
        if (q == end) return Z_OK;
        p = q + 1;
    }
}

/* Sub-chunk patterns: `$*` matches any (possibly empty) run of bytes. */
static bool _pat_starts_star(const char *p, size_t n) { return n >= 2 && p[0] == '$' && p[1] == '*'; }

static bool _pat_inter(const char *a, size_t an, const char *b, size_t bn, unsigned *budget) {
    if (*budget == 0) return true;
    (*budget)--; /* give up: answer conservatively */
    if (_pat_starts_star(a, an)) {
        if (_pat_inter(a + 2, an - 2, b, bn, budget)) return true;
        if (bn == 0) return false;
        size_t step = _pat_starts_star(b, bn) ? 2 : 1;
        return _pat_inter(a, an, b + step, bn - step, budget);
    }
    if (_pat_starts_star(b, bn)) return _pat_inter(b, bn, a, an, budget);
    if (an == 0 || bn == 0) return an == 0 && bn == 0;
    return a[0] == b[0] && _pat_inter(a + 1, an - 1, b + 1, bn - 1, budget);
}

/* Does pattern a match every string pattern b matches? */
static bool _pat_incl(const char *a, size_t an, const char *b, size_t bn, unsigned *budget) {
    if (*budget == 0) return false;
    (*budget)--;
    if (_pat_starts_star(a, an)) {
        if (_pat_incl(a + 2, an - 2, b, bn, budget)) return true;
        if (bn == 0) return false;
        size_t step = _pat_starts_star(b, bn) ? 2 : 1;
        return _pat_incl(a, an, b + step, bn - step, budget);
    }
    if (_pat_starts_star(b, bn)) return false;
    if (an == 0 || bn == 0) return an == 0 && bn == 0;
    return a[0] == b[0] && _pat_incl(a + 1, an - 1, b + 1, bn - 1, budget);
}

static bool _chunk_inter(_ke_t a, _ke_t b, unsigned *budget) {
    size_t ac = _ke_chunk(a), bc = _ke_chunk(b);
    if (ac == bc && memcmp(a.p, b.p, ac) == 0) return true;
    if (_ke_verbatim(a) || _ke_verbatim(b)) return false;
    if (_ke_is(a.p, ac, "*") || _ke_is(b.p, bc, "*")) return true;
    return _pat_inter(a.p, ac, b.p, bc, budget);
}

static bool _chunk_incl(_ke_t a, _ke_t b, unsigned *budget) {
    size_t ac = _ke_chunk(a), bc = _ke_chunk(b);
    if (ac == bc && memcmp(a.p, b.p, ac) == 0) return true;
    if (_ke_verbatim(a) || _ke_verbatim(b)) return false;
    if (_ke_is(a.p, ac, "*")) return true;
    return _pat_incl(a.p, ac, b.p, bc, budget);
}

static bool _ke_only_dstar_or_empty(_ke_t k) { return k.len == 0 || _ke_is(k.p, k.len, "**"); }

static bool _ke_any_verbatim(_ke_t k) {
    while (k.len > 0) {
        if (_ke_verbatim(k)) return true;
        k = _ke_rest(k);
    }
    return false;
}

static bool _ke_inter(_ke_t a, _ke_t b, unsigned *budget) {
    if (*budget == 0) return true;
    (*budget)--;
    if (a.len == 0 || b.len == 0) return _ke_only_dstar_or_empty(a) && _ke_only_dstar_or_empty(b);
    if (_ke_dstar(a)) {
        _ke_t ar = _ke_rest(a);
        if (ar.len == 0) return !_ke_any_verbatim(b);
        return (!_ke_verbatim(b) && _ke_inter(a, _ke_rest(b), budget)) || _ke_inter(ar, b, budget);
    }
    if (_ke_dstar(b)) return _ke_inter(b, a, budget);
    return _chunk_inter(a, b, budget) && _ke_inter(_ke_rest(a), _ke_rest(b), budget);
}

static bool _ke_incl(_ke_t a, _ke_t b, unsigned *budget) {
    if (*budget == 0) return false;
    (*budget)--;
    if (a.len == 0) return b.len == 0;
    if (_ke_dstar(a)) {
        if (_ke_incl(_ke_rest(a), b, budget)) return true;
        return b.len > 0 && !_ke_verbatim(b) && _ke_incl(a, _ke_rest(b), budget);
    }
    if (b.len == 0 || _ke_dstar(b)) return false;
    return _chunk_incl(a, b, budget) && _ke_incl(_ke_rest(a), _ke_rest(b), budget);
}

#define _KE_BUDGET 20000u

bool _z_ke_intersects(const char *a, size_t alen, const char *b, size_t blen) {
    _ke_t x = {a, alen}, y = {b, blen};
    unsigned budget = _KE_BUDGET;
    return _ke_inter(x, y, &budget);
}

bool _z_ke_includes(const char *a, size_t alen, const char *b, size_t blen) {
    _ke_t x = {a, alen}, y = {b, blen};
    unsigned budget = _KE_BUDGET;
    return _ke_incl(x, y, &budget);
}
