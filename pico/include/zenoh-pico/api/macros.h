/*
 * Generic helpers z_loan, z_loan_mut, z_move, z_drop, z_take, z_internal_check,
 * z_internal_null, z_clone, z_call and z_closure (C11 _Generic). C99 code
 * calls the typed functions (z_X_loan, z_X_move, ...) directly.
 */
#ifndef ZENOH_PICO_API_MACROS_H
#define ZENOH_PICO_API_MACROS_H

#include "zenoh-pico/api/primitives.h"
#include "zenoh-pico/api/liveliness.h"

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)

#if Z_FEATURE_MULTI_THREAD == 1
#define _ZP_MT_LOAN , z_owned_mutex_t: z_mutex_loan, z_owned_condvar_t: z_condvar_loan
#define _ZP_MT_LOAN_MUT , z_owned_mutex_t: z_mutex_loan_mut, z_owned_condvar_t: z_condvar_loan_mut
#define _ZP_MT_MOVE , z_owned_mutex_t: z_mutex_move, z_owned_condvar_t: z_condvar_move
#define _ZP_MT_DROP , z_moved_mutex_t *: z_mutex_drop, z_moved_condvar_t *: z_condvar_drop
#define _ZP_MT_TAKE , z_owned_mutex_t *: z_mutex_take, z_owned_condvar_t *: z_condvar_take
#define _ZP_MT_CHECK , z_owned_mutex_t: z_internal_mutex_check, z_owned_condvar_t: z_internal_condvar_check
#define _ZP_MT_NULL , z_owned_mutex_t *: z_internal_mutex_null, z_owned_condvar_t *: z_internal_condvar_null
#else
#define _ZP_MT_LOAN
#define _ZP_MT_LOAN_MUT
#define _ZP_MT_MOVE
#define _ZP_MT_DROP
#define _ZP_MT_TAKE
#define _ZP_MT_CHECK
#define _ZP_MT_NULL
#endif

#define z_loan(x) _Generic((x), \
    z_owned_slice_t: z_slice_loan, \
    z_owned_bytes_t: z_bytes_loan, \
    z_owned_string_t: z_string_loan, \
    z_owned_keyexpr_t: z_keyexpr_loan, \
    z_owned_encoding_t: z_encoding_loan, \
    z_owned_config_t: z_config_loan, \
    z_owned_session_t: z_session_loan, \
    z_owned_publisher_t: z_publisher_loan, \
    z_owned_subscriber_t: z_subscriber_loan, \
    z_owned_queryable_t: z_queryable_loan, \
    z_owned_liveliness_token_t: z_liveliness_token_loan, \
    z_owned_querier_t: z_querier_loan, \
    z_owned_sample_t: z_sample_loan, \
    z_owned_reply_t: z_reply_loan, \
    z_owned_query_t: z_query_loan, \
    z_owned_reply_err_t: z_reply_err_loan, \
    z_owned_closure_sample_t: z_closure_sample_loan, \
    z_owned_closure_query_t: z_closure_query_loan, \
    z_owned_closure_reply_t: z_closure_reply_loan, \
    z_owned_closure_zid_t: z_closure_zid_loan, \
    z_owned_closure_hello_t: z_closure_hello_loan, \
    z_owned_string_array_t: z_string_array_loan, \
    z_owned_hello_t: z_hello_loan, \
    z_view_slice_t: z_view_slice_loan, \
    z_view_string_t: z_view_string_loan, \
    z_view_keyexpr_t: z_view_keyexpr_loan \
    _ZP_MT_LOAN)(&(x))

#define z_loan_mut(x) _Generic((x), \
    z_owned_slice_t: z_slice_loan_mut, \
    z_owned_bytes_t: z_bytes_loan_mut, \
    z_owned_string_t: z_string_loan_mut, \
    z_owned_keyexpr_t: z_keyexpr_loan_mut, \
    z_owned_encoding_t: z_encoding_loan_mut, \
    z_owned_config_t: z_config_loan_mut, \
    z_owned_session_t: z_session_loan_mut, \
    z_owned_publisher_t: z_publisher_loan_mut, \
    z_owned_subscriber_t: z_subscriber_loan_mut, \
    z_owned_queryable_t: z_queryable_loan_mut, \
    z_owned_liveliness_token_t: z_liveliness_token_loan, \
    z_owned_querier_t: z_querier_loan_mut, \
    z_owned_sample_t: z_sample_loan_mut, \
    z_owned_reply_t: z_reply_loan, \
    z_owned_query_t: z_query_loan_mut, \
    z_owned_reply_err_t: z_reply_err_loan_mut, \
    z_owned_closure_sample_t: z_closure_sample_loan_mut, \
    z_owned_closure_query_t: z_closure_query_loan_mut, \
    z_owned_closure_reply_t: z_closure_reply_loan_mut, \
    z_owned_closure_zid_t: z_closure_zid_loan, \
    z_owned_closure_hello_t: z_closure_hello_loan, \
    z_owned_string_array_t: z_string_array_loan, \
    z_owned_hello_t: z_hello_loan_mut, \
    z_view_slice_t: z_view_slice_loan_mut, \
    z_view_string_t: z_view_string_loan_mut, \
    z_view_keyexpr_t: z_view_keyexpr_loan_mut \
    _ZP_MT_LOAN_MUT)(&(x))

#define z_move(x) _Generic((x), \
    z_owned_slice_t: z_slice_move, \
    z_owned_bytes_t: z_bytes_move, \
    z_owned_string_t: z_string_move, \
    z_owned_keyexpr_t: z_keyexpr_move, \
    z_owned_encoding_t: z_encoding_move, \
    z_owned_config_t: z_config_move, \
    z_owned_session_t: z_session_move, \
    z_owned_publisher_t: z_publisher_move, \
    z_owned_subscriber_t: z_subscriber_move, \
    z_owned_queryable_t: z_queryable_move, \
    z_owned_liveliness_token_t: z_liveliness_token_move, \
    z_owned_querier_t: z_querier_move, \
    z_owned_sample_t: z_sample_move, \
    z_owned_reply_t: z_reply_move, \
    z_owned_query_t: z_query_move, \
    z_owned_reply_err_t: z_reply_err_move, \
    z_owned_closure_sample_t: z_closure_sample_move, \
    z_owned_closure_query_t: z_closure_query_move, \
    z_owned_closure_reply_t: z_closure_reply_move, \
    z_owned_closure_zid_t: z_closure_zid_move, \
    z_owned_closure_hello_t: z_closure_hello_move, \
    z_owned_string_array_t: z_string_array_move, \
    z_owned_hello_t: z_hello_move \
    _ZP_MT_MOVE)(&(x))

#define z_drop(x) _Generic((x), \
    z_moved_slice_t *: z_slice_drop, \
    z_moved_bytes_t *: z_bytes_drop, \
    z_moved_string_t *: z_string_drop, \
    z_moved_keyexpr_t *: z_keyexpr_drop, \
    z_moved_encoding_t *: z_encoding_drop, \
    z_moved_config_t *: z_config_drop, \
    z_moved_session_t *: z_session_drop, \
    z_moved_publisher_t *: z_publisher_drop, \
    z_moved_subscriber_t *: z_subscriber_drop, \
    z_moved_queryable_t *: z_queryable_drop, \
    z_moved_liveliness_token_t *: z_liveliness_token_drop, \
    z_moved_querier_t *: z_querier_drop, \
    z_moved_sample_t *: z_sample_drop, \
    z_moved_reply_t *: z_reply_drop, \
    z_moved_query_t *: z_query_drop, \
    z_moved_reply_err_t *: z_reply_err_drop, \
    z_moved_closure_sample_t *: z_closure_sample_drop, \
    z_moved_closure_query_t *: z_closure_query_drop, \
    z_moved_closure_reply_t *: z_closure_reply_drop, \
    z_moved_closure_zid_t *: z_closure_zid_drop, \
    z_moved_closure_hello_t *: z_closure_hello_drop, \
    z_moved_string_array_t *: z_string_array_drop, \
    z_moved_hello_t *: z_hello_drop \
    _ZP_MT_DROP)(x)

#define z_internal_check(x) _Generic((x), \
    z_owned_slice_t: z_internal_slice_check, \
    z_owned_bytes_t: z_internal_bytes_check, \
    z_owned_string_t: z_internal_string_check, \
    z_owned_keyexpr_t: z_internal_keyexpr_check, \
    z_owned_encoding_t: z_internal_encoding_check, \
    z_owned_config_t: z_internal_config_check, \
    z_owned_session_t: z_internal_session_check, \
    z_owned_publisher_t: z_internal_publisher_check, \
    z_owned_subscriber_t: z_internal_subscriber_check, \
    z_owned_queryable_t: z_internal_queryable_check, \
    z_owned_liveliness_token_t: z_internal_liveliness_token_check, \
    z_owned_querier_t: z_internal_querier_check, \
    z_owned_sample_t: z_internal_sample_check, \
    z_owned_reply_t: z_internal_reply_check, \
    z_owned_query_t: z_internal_query_check, \
    z_owned_reply_err_t: z_internal_reply_err_check, \
    z_owned_closure_sample_t: z_internal_closure_sample_check, \
    z_owned_closure_query_t: z_internal_closure_query_check, \
    z_owned_closure_reply_t: z_internal_closure_reply_check, \
    z_owned_closure_zid_t: z_internal_closure_zid_check, \
    z_owned_closure_hello_t: z_internal_closure_hello_check, \
    z_owned_hello_t: z_internal_hello_check \
    _ZP_MT_CHECK)(&(x))

#define z_internal_null(x) _Generic((x), \
    z_owned_slice_t *: z_internal_slice_null, \
    z_owned_bytes_t *: z_internal_bytes_null, \
    z_owned_string_t *: z_internal_string_null, \
    z_owned_keyexpr_t *: z_internal_keyexpr_null, \
    z_owned_encoding_t *: z_internal_encoding_null, \
    z_owned_config_t *: z_internal_config_null, \
    z_owned_session_t *: z_internal_session_null, \
    z_owned_publisher_t *: z_internal_publisher_null, \
    z_owned_subscriber_t *: z_internal_subscriber_null, \
    z_owned_queryable_t *: z_internal_queryable_null, \
    z_owned_liveliness_token_t *: z_internal_liveliness_token_null, \
    z_owned_querier_t *: z_internal_querier_null, \
    z_owned_sample_t *: z_internal_sample_null, \
    z_owned_reply_t *: z_internal_reply_null, \
    z_owned_query_t *: z_internal_query_null, \
    z_owned_reply_err_t *: z_internal_reply_err_null, \
    z_owned_closure_sample_t *: z_internal_closure_sample_null, \
    z_owned_closure_query_t *: z_internal_closure_query_null, \
    z_owned_closure_reply_t *: z_internal_closure_reply_null, \
    z_owned_closure_zid_t *: z_internal_closure_zid_null, \
    z_owned_closure_hello_t *: z_internal_closure_hello_null, \
    z_owned_hello_t *: z_internal_hello_null \
    _ZP_MT_NULL)(x)

#define z_take(this_, x) _Generic((this_), \
    z_owned_slice_t *: z_slice_take, \
    z_owned_bytes_t *: z_bytes_take, \
    z_owned_string_t *: z_string_take, \
    z_owned_keyexpr_t *: z_keyexpr_take, \
    z_owned_encoding_t *: z_encoding_take, \
    z_owned_config_t *: z_config_take, \
    z_owned_session_t *: z_session_take, \
    z_owned_publisher_t *: z_publisher_take, \
    z_owned_subscriber_t *: z_subscriber_take, \
    z_owned_queryable_t *: z_queryable_take, \
    z_owned_liveliness_token_t *: z_liveliness_token_take, \
    z_owned_querier_t *: z_querier_take, \
    z_owned_sample_t *: z_sample_take, \
    z_owned_reply_t *: z_reply_take, \
    z_owned_query_t *: z_query_take, \
    z_owned_reply_err_t *: z_reply_err_take, \
    z_owned_closure_sample_t *: z_closure_sample_take, \
    z_owned_closure_query_t *: z_closure_query_take, \
    z_owned_closure_reply_t *: z_closure_reply_take, \
    z_owned_closure_zid_t *: z_closure_zid_take, \
    z_owned_closure_hello_t *: z_closure_hello_take, \
    z_owned_hello_t *: z_hello_take \
    _ZP_MT_TAKE)(this_, x)

#define z_clone(dst, src) _Generic((dst), \
    z_owned_bytes_t *: z_bytes_clone, \
    z_owned_string_t *: z_string_clone, \
    z_owned_keyexpr_t *: z_keyexpr_clone, \
    z_owned_encoding_t *: z_encoding_clone, \
    z_owned_config_t *: z_config_clone)(dst, src)

#define z_call(x, ...) _Generic((x), \
    z_loaned_closure_sample_t: z_closure_sample_call, \
    z_loaned_closure_query_t: z_closure_query_call, \
    z_loaned_closure_reply_t: z_closure_reply_call, \
    z_loaned_closure_zid_t: z_closure_zid_call, \
    z_loaned_closure_hello_t: z_closure_hello_call)(&(x), __VA_ARGS__)

#define _zp_closure_set(closure, callback, dropper, ctx, ...) \
    do {                                                   \
        (closure)->_val.call = callback;                   \
        (closure)->_val.drop = dropper;                    \
        (closure)->_val.context = ctx;                     \
    } while (0)
/* z_closure(&closure, callback[, drop[, context]]) */
#define z_closure(...) _zp_closure_set(__VA_ARGS__, 0, 0, 0)

#endif /* C11 */

#endif
