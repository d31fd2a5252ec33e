/*
 * weft-pico: a Zenoh protocol 0x09 client for microcontrollers.
 *
 * Include this one header. Its API is the corresponding subset of
 * Zenoh-Pico 1.x (same names, types and ownership rules); see README.md.
 */
#ifndef ZENOH_PICO_H
#define ZENOH_PICO_H

#define ZENOH_PICO "1.0.0-weft"
#define ZENOH_PICO_MAJOR 1
#define ZENOH_PICO_MINOR 0
#define ZENOH_PICO_PATCH 0

#include "zenoh-pico/config.h"
#include "zenoh-pico/api/constants.h"
#include "zenoh-pico/api/result.h"
#include "zenoh-pico/api/types.h"
#include "zenoh-pico/api/primitives.h"
#include "zenoh-pico/api/encoding.h"
#include "zenoh-pico/api/liveliness.h"
#include "zenoh-pico/api/macros.h"

#endif
