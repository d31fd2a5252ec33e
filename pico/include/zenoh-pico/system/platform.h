/* Zenoh-Pico programs include this path for the system helpers
 * (sleep, clock, random, mutex, condvar, task, malloc); all are in zenoh-pico.h. */
#ifndef ZENOH_PICO_SYSTEM_PLATFORM_H
#define ZENOH_PICO_SYSTEM_PLATFORM_H
#include "zenoh-pico.h"
#endif
