/*
 * Public types, with the Zenoh-Pico ownership conventions:
 *
 *   z_owned_X_t   a value the caller owns and must drop (z_X_drop(z_X_move(&x)))
 *   z_loaned_X_t  a borrowed view (z_X_loan(&x)); never dropped
 *   z_moved_X_t   an owned value being handed over (z_X_move(&x))
 *   z_view_X_t    a non-owning value built from caller memory
 *
 * Fields starting with '_' are private.
 */
#ifndef ZENOH_PICO_API_TYPES_H
#define ZENOH_PICO_API_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zenoh-pico/api/constants.h"
#include "zenoh-pico/api/result.h"
#include "zenoh-pico/config.h"
#include "zenoh-pico/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define _ZP_OWNED_TYPE(type, name)   \
    typedef struct {                 \
        type _val;                   \
    } z_owned_##name##_t;            \
    typedef type z_loaned_##name##_t; \
    typedef struct {                 \
        z_owned_##name##_t _this;    \
    } z_moved_##name##_t;

#define _ZP_VIEW_TYPE(type, name) \
    typedef struct {              \
        type _val;                \
    } z_view_##name##_t;

typedef void (*_z_deleter_t)(void *data, void *context);

/* Contiguous bytes, possibly owned (then released through `_deleter`). */
typedef struct {
    const uint8_t *_start;
    size_t _len;
    _z_deleter_t _deleter;
    void *_context;
} _z_slice_t;

typedef struct {
    _z_slice_t _s;
} _z_bytes_t;

typedef struct {
    _z_slice_t _s;
} _z_string_t;

typedef struct {
    _z_slice_t _s;
} _z_keyexpr_t;

typedef struct {
    uint16_t _id;
    _z_string_t _schema;
} _z_encoding_t;

typedef struct {
    uint8_t _mode; /* 0 client, 1 peer */
    char _connect[ZP_LOCATOR_CAPACITY];
    char _listen[ZP_LOCATOR_CAPACITY];
    uint8_t _zid[16];
    bool _has_zid;
    bool _no_scouting;                /* Z_CONFIG_MULTICAST_SCOUTING_KEY "false" */
    uint32_t _scouting_timeout_ms;    /* 0: Z_CONFIG_SCOUTING_TIMEOUT_DEFAULT */
    char _scouting[ZP_LOCATOR_CAPACITY]; /* "": Z_CONFIG_MULTICAST_LOCATOR_DEFAULT */
} _z_config_t;

typedef struct _z_session_t _z_session_t;
typedef struct {
    _z_session_t *_s;
} _z_session_ref_t;

/* Handle to an entity stored in its session's fixed table. */
typedef struct {
    _z_session_t *_s;
    uint32_t _id;
    uint8_t _slot;
} _z_entity_ref_t;
typedef _z_entity_ref_t _z_publisher_t;
typedef _z_entity_ref_t _z_subscriber_t;
typedef _z_entity_ref_t _z_queryable_t;
typedef _z_entity_ref_t _z_liveliness_token_t;

/* A querier: a key and the options of its gets (the key is a pool copy). */
typedef struct {
    _z_session_t *_s;
    _z_keyexpr_t _key;
    _z_encoding_t _encoding;
    z_query_target_t _target;
    z_consolidation_mode_t _consolidation;
    z_congestion_control_t _congestion_control;
    z_priority_t _priority;
    bool _is_express;
    uint64_t _timeout_ms;
    z_reply_keyexpr_t _accept_replies;
} _z_querier_t;

typedef struct {
    uint8_t id[16];
} z_id_t;

typedef struct {
    uint64_t time;
    z_id_t id;
    bool valid;
} z_timestamp_t;

typedef struct {
    z_id_t zid;
    uint32_t eid;
} z_entity_global_id_t;

typedef struct {
    _z_keyexpr_t keyexpr;
    _z_bytes_t payload;
    _z_encoding_t encoding;
    _z_bytes_t attachment;
    z_timestamp_t timestamp;
    z_sample_kind_t kind;
    z_priority_t priority;
    z_congestion_control_t congestion_control;
    z_reliability_t reliability;
    bool express;
} _z_sample_t;

typedef struct {
    _z_session_t *_s;
    uint32_t _rid;
    _z_keyexpr_t _key;
    _z_string_t _params;
    _z_bytes_t _payload;
    _z_encoding_t _encoding;
    _z_bytes_t _attachment;
    bool _anyke;
    uint8_t _qos;
    uint8_t _peer;
    void *_mem; /* owned copies (z_query_clone): the storage of the fields above */
} _z_query_t;

typedef struct {
    _z_bytes_t payload;
    _z_encoding_t encoding;
} _z_reply_err_t;

typedef struct {
    bool _is_ok;
    _z_sample_t _sample;
    _z_reply_err_t _err;
    bool _has_replier;
    z_entity_global_id_t _replier;
} _z_reply_t;

/* Locators of a Hello (views, valid during the scouting callback). */
#define ZP_HELLO_LOCATORS 4
typedef struct {
    _z_string_t _items[ZP_HELLO_LOCATORS];
    size_t _len;
} _z_string_array_t;

typedef struct {
    z_id_t _zid;
    z_whatami_t _whatami;
    _z_string_array_t _locators;
} _z_hello_t;

_ZP_OWNED_TYPE(_z_slice_t, slice)
_ZP_VIEW_TYPE(_z_slice_t, slice)
_ZP_OWNED_TYPE(_z_bytes_t, bytes)
_ZP_OWNED_TYPE(_z_string_t, string)
_ZP_VIEW_TYPE(_z_string_t, string)
_ZP_OWNED_TYPE(_z_keyexpr_t, keyexpr)
_ZP_VIEW_TYPE(_z_keyexpr_t, keyexpr)
_ZP_OWNED_TYPE(_z_encoding_t, encoding)
_ZP_OWNED_TYPE(_z_config_t, config)
_ZP_OWNED_TYPE(_z_session_ref_t, session)
_ZP_OWNED_TYPE(_z_publisher_t, publisher)
_ZP_OWNED_TYPE(_z_subscriber_t, subscriber)
_ZP_OWNED_TYPE(_z_queryable_t, queryable)
_ZP_OWNED_TYPE(_z_liveliness_token_t, liveliness_token)
_ZP_OWNED_TYPE(_z_querier_t, querier)
_ZP_OWNED_TYPE(_z_sample_t, sample)
_ZP_OWNED_TYPE(_z_query_t, query)
_ZP_OWNED_TYPE(_z_reply_t, reply)
_ZP_OWNED_TYPE(_z_reply_err_t, reply_err)
_ZP_OWNED_TYPE(_z_string_array_t, string_array)
_ZP_OWNED_TYPE(_z_hello_t, hello)

/* Reads a z_loaned_bytes_t sequentially. */
typedef struct {
    const _z_bytes_t *_bytes;
    size_t _pos;
} z_bytes_reader_t;

/* ---- closures ---- */
typedef void (*z_closure_drop_callback_t)(void *context);
typedef void (*z_closure_sample_callback_t)(z_loaned_sample_t *sample, void *context);
typedef void (*z_closure_query_callback_t)(z_loaned_query_t *query, void *context);
typedef void (*z_closure_reply_callback_t)(z_loaned_reply_t *reply, void *context);
typedef void (*z_closure_zid_callback_t)(const z_id_t *id, void *context);
typedef void (*z_closure_hello_callback_t)(z_loaned_hello_t *hello, void *context);

#define _ZP_CLOSURE_TYPE(name, cb_type)  \
    typedef struct {                     \
        void *context;                   \
        cb_type call;                    \
        z_closure_drop_callback_t drop;  \
    } _z_##name##_t;                     \
    _ZP_OWNED_TYPE(_z_##name##_t, name)

_ZP_CLOSURE_TYPE(closure_sample, z_closure_sample_callback_t)
_ZP_CLOSURE_TYPE(closure_query, z_closure_query_callback_t)
_ZP_CLOSURE_TYPE(closure_reply, z_closure_reply_callback_t)
_ZP_CLOSURE_TYPE(closure_zid, z_closure_zid_callback_t)
_ZP_CLOSURE_TYPE(closure_hello, z_closure_hello_callback_t)

/* ---- options ---- */
typedef struct {
    z_consolidation_mode_t mode;
} z_query_consolidation_t;

typedef struct {
#if Z_FEATURE_MULTI_THREAD == 1
    bool auto_start_read_task;
    bool auto_start_lease_task;
#else
    uint8_t __dummy;
#endif
} z_open_options_t;

typedef struct {
    uint8_t __dummy;
} z_close_options_t;

typedef struct {
    z_moved_encoding_t *encoding;
    z_congestion_control_t congestion_control;
    z_priority_t priority;
    bool is_express;
    z_reliability_t reliability;
} z_publisher_options_t;

typedef struct {
    z_moved_encoding_t *encoding;
    z_timestamp_t *timestamp;
    z_moved_bytes_t *attachment;
} z_publisher_put_options_t;

typedef struct {
    z_timestamp_t *timestamp;
} z_publisher_delete_options_t;

typedef struct {
    z_moved_encoding_t *encoding;
    z_congestion_control_t congestion_control;
    z_priority_t priority;
    z_timestamp_t *timestamp;
    bool is_express;
    z_moved_bytes_t *attachment;
    z_reliability_t reliability;
} z_put_options_t;

typedef struct {
    z_congestion_control_t congestion_control;
    z_priority_t priority;
    bool is_express;
    z_timestamp_t *timestamp;
    z_reliability_t reliability;
} z_delete_options_t;

typedef struct {
    uint8_t __dummy;
} z_subscriber_options_t;

typedef struct {
    bool complete;
} z_queryable_options_t;

typedef struct {
    z_moved_encoding_t *encoding;
    z_congestion_control_t congestion_control;
    z_priority_t priority;
    z_timestamp_t *timestamp;
    bool is_express;
    z_moved_bytes_t *attachment;
} z_query_reply_options_t;

typedef struct {
    z_congestion_control_t congestion_control;
    z_priority_t priority;
    z_timestamp_t *timestamp;
    bool is_express;
    z_moved_bytes_t *attachment;
} z_query_reply_del_options_t;

typedef struct {
    z_moved_encoding_t *encoding;
} z_query_reply_err_options_t;

typedef struct {
    z_moved_bytes_t *payload;
    z_moved_encoding_t *encoding;
    z_query_consolidation_t consolidation;
    z_congestion_control_t congestion_control;
    z_priority_t priority;
    bool is_express;
    z_query_target_t target;
    uint64_t timeout_ms;
    z_moved_bytes_t *attachment;
    z_reply_keyexpr_t accept_replies;
} z_get_options_t;

typedef struct z_querier_options_t {
    z_moved_encoding_t *encoding;
    z_query_target_t target;
    z_query_consolidation_t consolidation;
    z_congestion_control_t congestion_control;
    bool is_express;
    z_priority_t priority;
    uint64_t timeout_ms;
    z_reply_keyexpr_t accept_replies;
} z_querier_options_t;

typedef struct z_querier_get_options_t {
    z_moved_bytes_t *payload;
    z_moved_encoding_t *encoding;
    z_moved_bytes_t *attachment;
} z_querier_get_options_t;

#if Z_FEATURE_MULTI_THREAD == 1
typedef void *z_task_attr_t;
typedef struct {
    z_task_attr_t *task_attributes;
} zp_task_read_options_t;
typedef struct {
    z_task_attr_t *task_attributes;
} zp_task_lease_options_t;
#endif

typedef struct {
    uint32_t timeout_ms;
    z_what_t what;
} z_scout_options_t;

typedef struct {
    bool single_read;
} zp_read_options_t;
typedef struct {
    uint8_t __dummy;
} zp_send_keep_alive_options_t;
typedef struct {
    uint8_t __dummy;
} zp_send_join_options_t;

/* ---- system types of the public API ---- */
typedef struct {
    uint64_t _us;
} z_clock_t;
typedef struct {
    uint64_t _ms;
} z_time_t;

#if Z_FEATURE_MULTI_THREAD == 1
_ZP_OWNED_TYPE(_z_mutex_t, mutex)
_ZP_OWNED_TYPE(_z_condvar_t, condvar)
_ZP_OWNED_TYPE(_z_task_t, task)
#endif

#ifdef __cplusplus
}
#endif

#endif
