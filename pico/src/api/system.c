/* Public system helpers (sleep, clock, random) on top of the platform contract. */
#include "zenoh-pico/api/primitives.h"

/* Long division by 1000 in 16-bit steps: every partial dividend stays below 1000 << 16. */
uint64_t _z_div1000(uint64_t x) {
    uint32_t hi = (uint32_t)(x >> 32), lo = (uint32_t)x;
    uint32_t mid = ((hi % 1000u) << 16) | (lo >> 16);
    uint32_t low = ((mid % 1000u) << 16) | (lo & 0xffffu);
    return ((uint64_t)(hi / 1000u) << 32) | ((mid / 1000u) << 16) | (low / 1000u);
}

uint64_t _z_clock_ms(void) { return _z_div1000(_z_clock_us()); }

z_result_t z_sleep_us(size_t time) {
    _z_sleep_ms((uint32_t)((time + 999u) / 1000u));
    return Z_OK;
}
z_result_t z_sleep_ms(size_t time) {
    _z_sleep_ms((uint32_t)time);
    return Z_OK;
}
z_result_t z_sleep_s(size_t time) {
    _z_sleep_ms((uint32_t)(time * 1000u));
    return Z_OK;
}
z_clock_t z_clock_now(void) {
    z_clock_t c = {_z_clock_us()};
    return c;
}
unsigned long z_clock_elapsed_us(z_clock_t *time) { return (unsigned long)(_z_clock_us() - time->_us); }
unsigned long z_clock_elapsed_ms(z_clock_t *time) { return (unsigned long)_z_div1000(_z_clock_us() - time->_us); }
unsigned long z_clock_elapsed_s(z_clock_t *time) {
    return (unsigned long)_z_div1000(_z_div1000(_z_clock_us() - time->_us));
}
void z_clock_advance_us(z_clock_t *clock, unsigned long duration) { clock->_us += duration; }
void z_clock_advance_ms(z_clock_t *clock, unsigned long duration) { clock->_us += (uint64_t)duration * 1000u; }
void z_clock_advance_s(z_clock_t *clock, unsigned long duration) { clock->_us += (uint64_t)duration * 1000000u; }
z_time_t z_time_now(void) {
    z_time_t t = {_z_clock_ms()};
    return t;
}
unsigned long z_time_elapsed_ms(z_time_t *time) { return (unsigned long)(_z_clock_ms() - time->_ms); }
unsigned long z_time_elapsed_s(z_time_t *time) { return (unsigned long)_z_div1000(_z_clock_ms() - time->_ms); }
void z_random_fill(void *buf, size_t len) { _z_random_fill(buf, len); }
uint8_t z_random_u8(void) {
    uint8_t v;
    _z_random_fill(&v, sizeof(v));
    return v;
}
uint16_t z_random_u16(void) {
    uint16_t v;
    _z_random_fill(&v, sizeof(v));
    return v;
}
uint32_t z_random_u32(void) {
    uint32_t v;
    _z_random_fill(&v, sizeof(v));
    return v;
}
uint64_t z_random_u64(void) {
    uint64_t v;
    _z_random_fill(&v, sizeof(v));
    return v;
}
