/* The stack's high-water mark: startup code paints the stack with
 * STACK_PAINT before main; stack_used() finds the deepest word overwritten. */
#ifndef WEFT_PICO_BOARDS_STACK_H
#define WEFT_PICO_BOARDS_STACK_H

#include <stddef.h>
#include <stdint.h>

#define STACK_PAINT 0xA5C3A5C3u

/* Bytes of stack used so far (the deepest point reached since reset). */
size_t stack_used(void);
/* The stack's size (stack_used() == stack_size(): it probably overflowed). */
size_t stack_size(void);

#endif
