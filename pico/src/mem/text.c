/* Small string routines (text.h). */
#include "text.h"

size_t _z_strlen(const char *s) {
    const char *p = s;
    while (*p != '\0') p++;
    return (size_t)(p - s);
}

bool _z_prefix(const char *s, const char *prefix) {
    while (*prefix != '\0' && *s == *prefix) {
        s++;
        prefix++;
    }
    return *prefix == '\0';
}

bool _z_streq(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

const char *_z_strchr(const char *s, char c) {
    for (; *s != '\0'; s++)
        if (*s == c) return s;
    return NULL;
}
