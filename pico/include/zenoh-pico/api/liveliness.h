/* Liveliness: tokens, liveliness subscribers and liveliness get. */
#ifndef ZENOH_PICO_API_LIVELINESS_H
#define ZENOH_PICO_API_LIVELINESS_H

#include "zenoh-pico/api/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#if Z_FEATURE_LIVELINESS == 1
typedef struct z_liveliness_token_options_t {
    uint8_t __dummy;
} z_liveliness_token_options_t;

typedef struct z_liveliness_subscriber_options_t {
    bool history; /* also deliver the tokens alive when the subscriber is declared */
} z_liveliness_subscriber_options_t;

typedef struct z_liveliness_get_options_t {
    uint64_t timeout_ms;
} z_liveliness_get_options_t;

z_result_t z_liveliness_token_options_default(z_liveliness_token_options_t *options);
/* Declares a token: alive until undeclared or until the session ends. */
z_result_t z_liveliness_declare_token(const z_loaned_session_t *zs, z_owned_liveliness_token_t *token,
                                      const z_loaned_keyexpr_t *keyexpr, const z_liveliness_token_options_t *options);
z_result_t z_liveliness_undeclare_token(z_moved_liveliness_token_t *token);

#if Z_FEATURE_SUBSCRIPTION == 1
z_result_t z_liveliness_subscriber_options_default(z_liveliness_subscriber_options_t *options);
/* Samples: PUT when a matching token appears, DELETE when it goes. */
z_result_t z_liveliness_declare_subscriber(const z_loaned_session_t *zs, z_owned_subscriber_t *sub,
                                           const z_loaned_keyexpr_t *keyexpr, z_moved_closure_sample_t *callback,
                                           z_liveliness_subscriber_options_t *options);
z_result_t z_liveliness_declare_background_subscriber(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                                                      z_moved_closure_sample_t *callback,
                                                      z_liveliness_subscriber_options_t *options);
#endif

#if Z_FEATURE_QUERY == 1
z_result_t z_liveliness_get_options_default(z_liveliness_get_options_t *options);
/* One reply per alive token matching `keyexpr`, then the callback's drop. */
z_result_t z_liveliness_get(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                            z_moved_closure_reply_t *callback, z_liveliness_get_options_t *options);
#endif
#endif

#ifdef __cplusplus
}
#endif

#endif
