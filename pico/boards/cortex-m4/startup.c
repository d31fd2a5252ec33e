/*
 * Cortex-M4 startup: the vector table (initial stack pointer, reset, faults,
 * SysTick), and the reset handler that copies .data, zeroes .bss, paints the
 * stack (for the high-water mark) and calls main.
 */
#include <stdint.h>

#include "../common/stack.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_bottom[], __stack_top[];

int main(void);
void reset_handler(void);
void systick_handler(void);

static void fault_handler(void) {
    for (;;) {
    }
}

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    reset_handler,
    fault_handler, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
    0, 0, 0, 0,
    fault_handler, /* SVCall */
    fault_handler, /* DebugMon */
    0,
    fault_handler, /* PendSV */
    systick_handler,
};

void reset_handler(void) {
    uint32_t *src = __data_load, *dst = __data_start;
    while (dst < __data_end) *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; dst++) *dst = 0;
    /* paint the stack below this frame */
    uint32_t *here = (uint32_t *)__builtin_frame_address(0) - 16;
    for (dst = __stack_bottom; dst < here; dst++) *dst = STACK_PAINT;
    (void)main();
    for (;;) {
    }
}
