/*
 * SiFive E board (QEMU -M sifive_e, as the HiFive1): UART0 (and UART1 on
 * hardware), the CLINT's mtime as the clock, semihosting for
 * the console and exit. Register layouts from the SiFive FE310 manual.
 */
#include <string.h>

#include "../../src/platform/baremetal/board.h"

#define UART_TXDATA 0x00u /* bit 31: full */
#define UART_RXDATA 0x04u /* bit 31: empty */
#define UART_TXCTRL 0x08u /* bit 0: enable */
#define UART_RXCTRL 0x0Cu /* bit 0: enable */
#define UART_DIV 0x18u
#define TLCLK_HZ 16000000u /* the bus clock the divisor divides (hfclk at reset) */
static const uintptr_t uart_base[] = {0x10013000u, 0x10023000u};
#define UARTS (int)(sizeof(uart_base) / sizeof(uart_base[0]))

static volatile uint32_t *reg(uintptr_t base, uint32_t off) { return (volatile uint32_t *)(base + off); }

#define MTIME_LO (*(volatile uint32_t *)0x0200BFF8u)
#define MTIME_HI (*(volatile uint32_t *)0x0200BFFCu)
/* QEMU's sifive_e counts mtime at 10 MHz; an FE310 (HiFive1) counts it at
 * the 32,768 Hz of its real-time clock: build with -DMTIME_HZ=32768u. */
#ifndef MTIME_HZ
#define MTIME_HZ 10000000u
#endif

static uint64_t mtime(void) {
    uint32_t hi, lo;
    do {
        hi = MTIME_HI;
        lo = MTIME_LO;
    } while (hi != MTIME_HI);
    return ((uint64_t)hi << 32) | lo;
}

static uint64_t boot;

void board_init(void) { boot = mtime(); }

#if MTIME_HZ != 32768u && MTIME_HZ % 1000000u == 0 && MTIME_HZ / 1000000u < 65536u
/* t / d for d < 2^16 by long division in 16-bit steps (the partial dividends
 * stay below d << 16): rv32 has 32-bit division only, and the C runtime's
 * 64-bit one is large. */
static uint64_t div_small(uint64_t t, uint32_t d) {
    uint32_t hi = (uint32_t)(t >> 32), lo = (uint32_t)t;
    uint32_t mid = ((hi % d) << 16) | (lo >> 16);
    uint32_t low = ((mid % d) << 16) | (lo & 0xffffu);
    return ((uint64_t)(hi / d) << 32) | ((mid / d) << 16) | (low / d);
}
#endif

uint64_t board_clock_us(void) {
    uint64_t t = mtime() - boot;
#if MTIME_HZ == 32768u /* 10^6 / 2^15 = 15625 / 2^9 */
    return (t >> 15) * 1000000u + ((((uint32_t)t & 0x7fffu) * 15625u) >> 9);
#elif MTIME_HZ % 1000000u == 0 && MTIME_HZ / 1000000u < 65536u
    return div_small(t, MTIME_HZ / 1000000u);
#else
    return (t / MTIME_HZ) * 1000000u + (t % MTIME_HZ) * 1000000u / MTIME_HZ;
#endif
}

uint32_t board_entropy(void) {
    uint32_t cycles;
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, mcycle\n.option pop" : "=r"(cycles));
    return cycles ^ (uint32_t)mtime();
}

int board_uart_open(const char *dev, uint32_t baudrate) {
    if (dev[0] != 'u' || dev[1] != 'a' || dev[2] != 'r' || dev[3] != 't' || dev[4] < '0' || dev[4] >= '0' + UARTS || dev[5] != '\0') return -1;
    if (baudrate == 0 || TLCLK_HZ / baudrate < 2u) return -1;
    int u = dev[4] - '0';
    *reg(uart_base[u], UART_DIV) = TLCLK_HZ / baudrate - 1u;
    *reg(uart_base[u], UART_TXCTRL) = 1u;
    *reg(uart_base[u], UART_RXCTRL) = 1u;
    while (board_uart_getc(u) >= 0) {
    }
    return u;
}

void board_uart_putc(int uart, uint8_t byte) {
    while ((*reg(uart_base[uart], UART_TXDATA) & 0x80000000u) != 0) {
    }
    *reg(uart_base[uart], UART_TXDATA) = byte;
}

int board_uart_getc(int uart) {
    uint32_t v = *reg(uart_base[uart], UART_RXDATA);
    return (v & 0x80000000u) != 0 ? -1 : (int)(v & 0xffu);
}

void board_uart_close(int uart) {
    *reg(uart_base[uart], UART_TXCTRL) = 0;
    *reg(uart_base[uart], UART_RXCTRL) = 0;
}

/* ---- semihosting (the slli/ebreak/srai sequence): the emulator's stdout and exit ---- */
#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_APPLICATION_EXIT 0x20026
#define ADP_RUNTIME_ERROR 0x20023

static long semihost(long op, const void *arg) {
    register long a0 __asm__("a0") = op;
    register const void *a1 __asm__("a1") = arg;
    __asm__ volatile(".option push\n"
                     ".option norvc\n"
                     ".balign 16\n"
                     "slli x0, x0, 0x1f\n"
                     "ebreak\n"
                     "srai x0, x0, 7\n"
                     ".option pop"
                     : "+r"(a0)
                     : "r"(a1)
                     : "memory");
    return a0;
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
