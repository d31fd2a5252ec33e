/* The heap's high-water mark (heap.c). */
#ifndef WEFT_UPSTREAM_HEAP_H
#define WEFT_UPSTREAM_HEAP_H

#include <stddef.h>

/* The highest the heap's break has been (bytes from the arena's start). */
size_t heap_used(void);
/* The arena's size. */
size_t heap_size(void);

#endif
