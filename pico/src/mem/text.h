/*
 * The few string routines the library needs, instead of the C library's:
 * on a microcontroller those are built for speed on long strings (newlib-nano's
 * strcmp alone is 732 B on a Cortex-M4), these are a few bytes each and the
 * library's strings are short (locators, modes, key expressions).
 */
#ifndef WEFT_PICO_MEM_TEXT_H
#define WEFT_PICO_MEM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

size_t _z_strlen(const char *s);
/* True if a and b are the same string. */
bool _z_streq(const char *a, const char *b);
/* True if s starts with prefix. */
bool _z_prefix(const char *s, const char *prefix);
/* The first c in s, or NULL. */
const char *_z_strchr(const char *s, char c);

#endif
