/* Result codes: 0 is success, every error is negative. */
#ifndef ZENOH_PICO_API_RESULT_H
#define ZENOH_PICO_API_RESULT_H

#include <stdint.h>

typedef int8_t z_result_t;

typedef enum {
    Z_OK = 0,
    Z_CHANNEL_DISCONNECTED = 1,
    Z_CHANNEL_NODATA = 2,
    Z_ENOSPACE = -98,      /* a buffer or message is larger than the configured limit */
    Z_ETRANSPORT = -100,   /* the link failed or the session is not connected */
    Z_EOPEN = -102,        /* the session could not be opened */
    Z_ECONFIG = -91,       /* invalid or unsupported configuration / locator */
    Z_ENOMEM = -78,        /* a fixed pool is exhausted */
    Z_EINVAL = -75,        /* invalid argument */
    Z_ECLOSED = -73,       /* the session is closed */
    Z_EDESERIALIZE = -72,  /* malformed wire input */
    Z_ETIMEDOUT = -71,
    Z_EUNSUPPORTED = -117, /* valid input this build does not handle */
    Z_EGENERIC = -128
} z_result_code_t;

#endif
