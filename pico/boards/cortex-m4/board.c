/*
 * MPS2 AN386 board (QEMU -M mps2-an386): CMSDK APB UARTs 0..4, SysTick at
 * the 25 MHz system clock as the 1 ms tick, semihosting for the console and
 * exit. Register layouts from the CMSDK and ARMv7-M reference manuals.
 */
#include <string.h>

#include "../../src/platform/baremetal/board.h"

#define SYSCLK_HZ 25000000u

/* CMSDK APB UART */
#define UART_DATA 0x00u
#define UART_STATE 0x04u /* bit 0: TX full, bit 1: RX full */
#define UART_CTRL 0x08u  /* bit 0: TX enable, bit 1: RX enable */
#define UART_BAUDDIV 0x10u
static const uintptr_t uart_base[] = {0x40004000u, 0x40005000u, 0x40006000u, 0x40007000u, 0x40009000u};
#define UARTS (int)(sizeof(uart_base) / sizeof(uart_base[0]))

static volatile uint32_t *reg(uintptr_t base, uint32_t off) { return (volatile uint32_t *)(base + off); }

/* SysTick */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define TICK_RELOAD (SYSCLK_HZ / 1000u - 1u)

static volatile uint32_t tick_ms;

void systick_handler(void);
void systick_handler(void) { tick_ms++; }

void board_init(void) {
    SYST_RVR = TICK_RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 0x7u; /* processor clock, interrupt, enable */
}

uint64_t board_clock_us(void) {
    uint32_t ms, val;
    do { /* a tick between the two reads of ms: read again */
        ms = tick_ms;
        val = SYST_CVR;
    } while (ms != tick_ms);
    return (uint64_t)ms * 1000u + (TICK_RELOAD - val) / (SYSCLK_HZ / 1000000u);
}

uint32_t board_entropy(void) { return SYST_CVR ^ (tick_ms << 16); }

int board_uart_open(const char *dev, uint32_t baudrate) {
    if (dev[0] != 'u' || dev[1] != 'a' || dev[2] != 'r' || dev[3] != 't' || dev[4] < '0' || dev[4] >= '0' + UARTS || dev[5] != '\0') return -1;
    if (baudrate == 0 || SYSCLK_HZ / baudrate < 16u) return -1;
    int u = dev[4] - '0';
    *reg(uart_base[u], UART_CTRL) = 0;
    *reg(uart_base[u], UART_BAUDDIV) = SYSCLK_HZ / baudrate;
    *reg(uart_base[u], UART_CTRL) = 0x3u;
    while (board_uart_getc(u) >= 0) {
    }
    return u;
}

void board_uart_putc(int uart, uint8_t byte) {
    while ((*reg(uart_base[uart], UART_STATE) & 0x1u) != 0) {
    }
    *reg(uart_base[uart], UART_DATA) = byte;
}

int board_uart_getc(int uart) {
    if ((*reg(uart_base[uart], UART_STATE) & 0x2u) == 0) return -1;
    return (int)(*reg(uart_base[uart], UART_DATA) & 0xffu);
}

void board_uart_close(int uart) { *reg(uart_base[uart], UART_CTRL) = 0; }

/* ---- semihosting (bkpt 0xAB): the emulator's stdout and exit ---- */
#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_APPLICATION_EXIT 0x20026
#define ADP_RUNTIME_ERROR 0x20023

static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void board_console_write(const char *s, size_t len) {
    char line[81];
    while (len > 0) {
        size_t n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
        memcpy(line, s, n);
        line[n] = '\0';
        (void)semihost(SYS_WRITE0, line);
        s += n;
        len -= n;
    }
}

void board_exit(int code) {
    (void)semihost(SYS_EXIT, (const void *)(uintptr_t)(code == 0 ? ADP_APPLICATION_EXIT : ADP_RUNTIME_ERROR));
    for (;;) {
    }
}
