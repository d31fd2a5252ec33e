/* Key expressions: validation (canonical form), intersection, inclusion. */
#ifndef WEFT_PICO_KEYEXPR_H
#define WEFT_PICO_KEYEXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "zenoh-pico/api/result.h"

/* Z_OK if `s` is a valid canonical key expression, Z_EINVAL otherwise. */
z_result_t _z_ke_check(const char *s, size_t len);
/* True if at least one key matches both expressions. */
bool _z_ke_intersects(const char *a, size_t alen, const char *b, size_t blen);
/* True if every key matching b matches a. */
bool _z_ke_includes(const char *a, size_t alen, const char *b, size_t blen);

#endif
