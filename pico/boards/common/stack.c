/* The stack's high-water mark (stack.h). */
#include "stack.h"

extern uint32_t __stack_bottom[], __stack_top[];

size_t stack_used(void) {
    const uint32_t *p = __stack_bottom;
    while (p < __stack_top && *p == STACK_PAINT) p++;
    return (size_t)((const uint8_t *)__stack_top - (const uint8_t *)p);
}

size_t stack_size(void) { return (size_t)((const uint8_t *)__stack_top - (const uint8_t *)__stack_bottom); }
