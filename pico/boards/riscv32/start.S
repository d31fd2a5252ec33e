/*
 * RV32 startup: global and stack pointers, a trap vector that stops, .data
 * copied, .bss zeroed, the stack painted (for the high-water mark), main.
 */
#define STACK_PAINT 0xA5C3A5C3

    .option arch, +zicsr
    .section .text.start, "ax"
    .globl _start
_start:
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, __stack_top
    la t0, trap
    csrw mtvec, t0
    la t0, __data_load
    la t1, __data_start
    la t2, __data_end
1:  bgeu t1, t2, 2f
    lw t3, 0(t0)
    sw t3, 0(t1)
    addi t0, t0, 4
    addi t1, t1, 4
    j 1b
2:  la t1, __bss_start
    la t2, __bss_end
3:  bgeu t1, t2, 4f
    sw zero, 0(t1)
    addi t1, t1, 4
    j 3b
4:  la t1, __stack_bottom
    mv t2, sp
    li t3, STACK_PAINT
5:  bgeu t1, t2, 6f
    sw t3, 0(t1)
    addi t1, t1, 4
    j 5b
6:  call main
7:  j 7b

    .balign 4
trap:
    j trap
