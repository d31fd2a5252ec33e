/*
 * The public functions: the subset of Zenoh-Pico 1.x's API that weft-pico
 * provides, with the same names, signatures and ownership rules.
 * README.md lists them by area.
 */
#ifndef ZENOH_PICO_API_PRIMITIVES_H
#define ZENOH_PICO_API_PRIMITIVES_H

#include "zenoh-pico/api/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For every owned type X: null/check/loan/loan_mut/move/take/drop. */
#define _ZP_OWNED_DECL(name)                                                  \
    void z_internal_##name##_null(z_owned_##name##_t *obj);                   \
    bool z_internal_##name##_check(const z_owned_##name##_t *obj);            \
    const z_loaned_##name##_t *z_##name##_loan(const z_owned_##name##_t *obj); \
    z_loaned_##name##_t *z_##name##_loan_mut(z_owned_##name##_t *obj);         \
    z_moved_##name##_t *z_##name##_move(z_owned_##name##_t *obj);              \
    void z_##name##_take(z_owned_##name##_t *obj, z_moved_##name##_t *src);    \
    void z_##name##_drop(z_moved_##name##_t *obj);

#define _ZP_VIEW_DECL(name)                                                     \
    bool z_view_##name##_is_empty(const z_view_##name##_t *obj);                \
    const z_loaned_##name##_t *z_view_##name##_loan(const z_view_##name##_t *obj); \
    z_loaned_##name##_t *z_view_##name##_loan_mut(z_view_##name##_t *obj);      \
    void z_view_##name##_empty(z_view_##name##_t *obj);

_ZP_OWNED_DECL(slice)
_ZP_OWNED_DECL(bytes)
_ZP_OWNED_DECL(string)
_ZP_OWNED_DECL(keyexpr)
_ZP_OWNED_DECL(encoding)
_ZP_OWNED_DECL(config)
_ZP_OWNED_DECL(session)
_ZP_OWNED_DECL(publisher)
_ZP_OWNED_DECL(subscriber)
_ZP_OWNED_DECL(queryable)
_ZP_OWNED_DECL(liveliness_token)
_ZP_OWNED_DECL(querier)
_ZP_OWNED_DECL(sample)
_ZP_OWNED_DECL(reply)
_ZP_OWNED_DECL(query)
_ZP_OWNED_DECL(reply_err)
_ZP_OWNED_DECL(closure_sample)
_ZP_OWNED_DECL(closure_query)
_ZP_OWNED_DECL(closure_reply)
_ZP_OWNED_DECL(closure_zid)
_ZP_OWNED_DECL(closure_hello)
_ZP_OWNED_DECL(string_array)
_ZP_OWNED_DECL(hello)
_ZP_VIEW_DECL(slice)
_ZP_VIEW_DECL(string)
_ZP_VIEW_DECL(keyexpr)

/* Copies (pool- or malloc-backed). */
z_result_t z_bytes_clone(z_owned_bytes_t *dst, const z_loaned_bytes_t *src);
z_result_t z_string_clone(z_owned_string_t *dst, const z_loaned_string_t *src);
z_result_t z_keyexpr_clone(z_owned_keyexpr_t *dst, const z_loaned_keyexpr_t *src);
z_result_t z_encoding_clone(z_owned_encoding_t *dst, const z_loaned_encoding_t *src);
z_result_t z_config_clone(z_owned_config_t *dst, const z_loaned_config_t *src);

/* ---- closures ---- */
z_result_t z_closure_sample(z_owned_closure_sample_t *closure, z_closure_sample_callback_t call,
                            z_closure_drop_callback_t drop, void *context);
z_result_t z_closure_query(z_owned_closure_query_t *closure, z_closure_query_callback_t call,
                           z_closure_drop_callback_t drop, void *context);
z_result_t z_closure_reply(z_owned_closure_reply_t *closure, z_closure_reply_callback_t call,
                           z_closure_drop_callback_t drop, void *context);
z_result_t z_closure_zid(z_owned_closure_zid_t *closure, z_closure_zid_callback_t call, z_closure_drop_callback_t drop,
                         void *context);
/* Calls the closure (nothing if it is empty). */
void z_closure_sample_call(const z_loaned_closure_sample_t *closure, z_loaned_sample_t *sample);
void z_closure_query_call(const z_loaned_closure_query_t *closure, z_loaned_query_t *query);
void z_closure_reply_call(const z_loaned_closure_reply_t *closure, z_loaned_reply_t *reply);
void z_closure_zid_call(const z_loaned_closure_zid_t *closure, const z_id_t *id);
z_result_t z_closure_hello(z_owned_closure_hello_t *closure, z_closure_hello_callback_t call,
                           z_closure_drop_callback_t drop, void *context);
void z_closure_hello_call(const z_loaned_closure_hello_t *closure, z_loaned_hello_t *hello);

/* ---- strings, slices, bytes ---- */
z_result_t z_view_string_from_str(z_view_string_t *str, const char *value);
z_result_t z_view_string_from_substr(z_view_string_t *str, const char *value, size_t len);
/* The bytes of a string (not necessarily NUL-terminated; copies made by the library are). */
const char *z_string_data(const z_loaned_string_t *str);
/* Length in bytes. */
size_t z_string_len(const z_loaned_string_t *str);
/* Copies a C string into pool storage (Z_ENOMEM when the pool is exhausted). */
z_result_t z_string_copy_from_str(z_owned_string_t *str, const char *value);
z_result_t z_string_copy_from_substr(z_owned_string_t *str, const char *value, size_t len);
/* Takes ownership of `value`; `deleter(value, context)` runs on drop. */
z_result_t z_string_from_str(z_owned_string_t *str, char *value, void (*deleter)(void *value, void *context),
                             void *context);
void z_string_empty(z_owned_string_t *str);
bool z_string_is_empty(const z_loaned_string_t *str);
const z_loaned_slice_t *z_string_as_slice(const z_loaned_string_t *str);

/* Copies `len` bytes into pool storage. */
z_result_t z_slice_copy_from_buf(z_owned_slice_t *slice, const uint8_t *data, size_t len);
/* Takes ownership of `data`; `deleter(data, context)` runs on drop. */
z_result_t z_slice_from_buf(z_owned_slice_t *slice, uint8_t *data, size_t len,
                            void (*deleter)(void *data, void *context), void *context);
z_result_t z_view_slice_from_buf(z_view_slice_t *slice, const uint8_t *data, size_t len);
void z_slice_empty(z_owned_slice_t *slice);
const uint8_t *z_slice_data(const z_loaned_slice_t *slice);
size_t z_slice_len(const z_loaned_slice_t *slice);
bool z_slice_is_empty(const z_loaned_slice_t *slice);

/* Payload: a copy of `len` bytes in pool storage. */
z_result_t z_bytes_copy_from_buf(z_owned_bytes_t *bytes, const uint8_t *data, size_t len);
/* Payload: takes ownership of `data` (no copy); `deleter` runs on drop. */
z_result_t z_bytes_from_buf(z_owned_bytes_t *bytes, uint8_t *data, size_t len,
                            void (*deleter)(void *data, void *context), void *context);
/* Payload: refers to `data`, which must outlive its use (no copy). */
z_result_t z_bytes_from_static_buf(z_owned_bytes_t *bytes, const uint8_t *data, size_t len);
/* Payload: a copy of a C string (without its NUL). */
z_result_t z_bytes_copy_from_str(z_owned_bytes_t *bytes, const char *value);
z_result_t z_bytes_from_str(z_owned_bytes_t *bytes, char *value, void (*deleter)(void *value, void *context),
                            void *context);
/* Payload: refers to a C string that outlives its use (no copy). */
z_result_t z_bytes_from_static_str(z_owned_bytes_t *bytes, const char *value);
z_result_t z_bytes_copy_from_slice(z_owned_bytes_t *bytes, const z_loaned_slice_t *slice);
z_result_t z_bytes_from_slice(z_owned_bytes_t *bytes, z_moved_slice_t *slice);
z_result_t z_bytes_copy_from_string(z_owned_bytes_t *bytes, const z_loaned_string_t *s);
z_result_t z_bytes_from_string(z_owned_bytes_t *bytes, z_moved_string_t *s);
/* Copies the payload into an owned string. */
z_result_t z_bytes_to_string(const z_loaned_bytes_t *bytes, z_owned_string_t *str);
z_result_t z_bytes_to_slice(const z_loaned_bytes_t *bytes, z_owned_slice_t *dst);
/* A view on the payload bytes (always contiguous in weft-pico). */
z_result_t z_bytes_get_contiguous_view(const z_loaned_bytes_t *bytes, z_view_slice_t *view);
void z_bytes_empty(z_owned_bytes_t *bytes);
/* Payload length in bytes. */
size_t z_bytes_len(const z_loaned_bytes_t *bytes);
bool z_bytes_is_empty(const z_loaned_bytes_t *bytes);
/* A reader positioned at the first byte. */
z_bytes_reader_t z_bytes_get_reader(const z_loaned_bytes_t *bytes);
/* Copies up to `len` bytes to `dst`; returns how many were copied. */
size_t z_bytes_reader_read(z_bytes_reader_t *reader, uint8_t *dst, size_t len);
size_t z_bytes_reader_remaining(const z_bytes_reader_t *reader);

/* ---- key expressions ---- */
z_result_t z_view_keyexpr_from_str(z_view_keyexpr_t *keyexpr, const char *name);
/* Same without validation: `name` must be valid and canonical. */
void z_view_keyexpr_from_str_unchecked(z_view_keyexpr_t *keyexpr, const char *name);
z_result_t z_view_keyexpr_from_substr(z_view_keyexpr_t *keyexpr, const char *name, size_t len);
void z_view_keyexpr_from_substr_unchecked(z_view_keyexpr_t *keyexpr, const char *name, size_t len);
/* An owned copy (pool storage) of a valid, canonical key expression. */
z_result_t z_keyexpr_from_str(z_owned_keyexpr_t *keyexpr, const char *name);
z_result_t z_keyexpr_from_substr(z_owned_keyexpr_t *keyexpr, const char *name, size_t len);
/* The key expression as a string view. */
z_result_t z_keyexpr_as_view_string(const z_loaned_keyexpr_t *keyexpr, z_view_string_t *str);
/* 0 (Z_OK) if the key expression is valid and canonical, negative otherwise. */
z_result_t z_keyexpr_is_canon(const char *start, size_t len);
/* True if every key matching `r` matches `l`. */
bool z_keyexpr_includes(const z_loaned_keyexpr_t *l, const z_loaned_keyexpr_t *r);
/* True if at least one key matches both. */
bool z_keyexpr_intersects(const z_loaned_keyexpr_t *l, const z_loaned_keyexpr_t *r);
/* True if both are the same (canonical) expression. */
bool z_keyexpr_equals(const z_loaned_keyexpr_t *l, const z_loaned_keyexpr_t *r);
/* A client sends nothing for this: the copy is used as a full key. */
z_result_t z_declare_keyexpr(const z_loaned_session_t *zs, z_owned_keyexpr_t *declared_keyexpr,
                             const z_loaned_keyexpr_t *keyexpr);
z_result_t z_undeclare_keyexpr(const z_loaned_session_t *zs, z_moved_keyexpr_t *keyexpr);

/* ---- encodings ---- */
z_result_t z_encoding_from_str(z_owned_encoding_t *encoding, const char *s);
z_result_t z_encoding_from_substr(z_owned_encoding_t *encoding, const char *s, size_t len);
z_result_t z_encoding_set_schema_from_str(z_loaned_encoding_t *encoding, const char *schema);
z_result_t z_encoding_set_schema_from_substr(z_loaned_encoding_t *encoding, const char *schema, size_t len);
/* The "mime[;schema]" text of an encoding. */
z_result_t z_encoding_to_string(const z_loaned_encoding_t *encoding, z_owned_string_t *string);
bool z_encoding_equals(const z_loaned_encoding_t *left, const z_loaned_encoding_t *right);

/* ---- configuration ---- */
z_result_t z_config_default(z_owned_config_t *config);
/* Sets a Z_CONFIG_* key; unknown Zenoh-Pico keys are accepted and ignored. */
z_result_t zp_config_insert(z_loaned_config_t *config, uint8_t key, const char *value);
/* The value of a key, or NULL. */
const char *zp_config_get(const z_loaned_config_t *config, uint8_t key);

/* ---- scouting (Z_FEATURE_SCOUTING) ---- */
#if Z_FEATURE_SCOUTING == 1
void z_scout_options_default(z_scout_options_t *options);
/* Multicasts Scouts on the configuration's multicast locator for
 * options->timeout_ms and calls `callback` once per answering node; then
 * drops the callback. Blocks for the whole timeout. */
z_result_t z_scout(z_moved_config_t *config, z_moved_closure_hello_t *callback, const z_scout_options_t *options);
#endif
z_id_t z_hello_zid(const z_loaned_hello_t *hello);
z_whatami_t z_hello_whatami(const z_loaned_hello_t *hello);
/* The Hello's locators (views valid during the callback). */
const z_loaned_string_array_t *zp_hello_locators(const z_loaned_hello_t *hello);
size_t z_string_array_len(const z_loaned_string_array_t *a);
const z_loaned_string_t *z_string_array_get(const z_loaned_string_array_t *a, size_t k);
bool z_string_array_is_empty(const z_loaned_string_array_t *a);
/* "router", "peer" or "client". */
z_result_t z_whatami_to_view_string(z_whatami_t whatami, z_view_string_t *str_out);

/* ---- session ---- */
void z_open_options_default(z_open_options_t *options);
/* Opens a session (client: connects to the router of Z_CONFIG_CONNECT_KEY;
 * peer: joins the multicast group of Z_CONFIG_LISTEN_KEY or CONNECT_KEY). */
z_result_t z_open(z_owned_session_t *zs, z_moved_config_t *config, const z_open_options_t *options);
void z_close_options_default(z_close_options_t *options);
/* Closes the session: undeclares nothing, sends Close and releases the link. */
z_result_t z_close(z_loaned_session_t *zs, const z_close_options_t *options);
/* True once the session was closed. */
bool z_session_is_closed(const z_loaned_session_t *zs);
/* This session's ZenohID. */
z_id_t z_info_zid(const z_loaned_session_t *zs);
/* Calls `callback` with the router's ZenohID (client mode, when connected). */
z_result_t z_info_routers_zid(const z_loaned_session_t *zs, z_moved_closure_zid_t *callback);
/* Calls `callback` with each multicast group member's ZenohID (peer mode). */
z_result_t z_info_peers_zid(const z_loaned_session_t *zs, z_moved_closure_zid_t *callback);
/* Lowercase hexadecimal text of a ZenohID. */
z_result_t z_id_to_string(const z_id_t *id, z_owned_string_t *str);

/* ---- publication ---- */
void z_put_options_default(z_put_options_t *options);
void z_delete_options_default(z_delete_options_t *options);
/* Publishes `payload` (consumed) on `keyexpr`, without declaring a publisher. */
z_result_t z_put(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr, z_moved_bytes_t *payload,
                 const z_put_options_t *options);
/* Publishes a deletion of `keyexpr`. */
z_result_t z_delete(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr, const z_delete_options_t *options);
void z_publisher_options_default(z_publisher_options_t *options);
/* Declares a publisher (its key, QoS and encoding are kept for every put). */
z_result_t z_declare_publisher(const z_loaned_session_t *zs, z_owned_publisher_t *pub,
                               const z_loaned_keyexpr_t *keyexpr, const z_publisher_options_t *options);
/* Undeclares and drops a publisher. */
z_result_t z_undeclare_publisher(z_moved_publisher_t *pub);
void z_publisher_put_options_default(z_publisher_put_options_t *options);
void z_publisher_delete_options_default(z_publisher_delete_options_t *options);
/* Publishes `payload` (consumed) with the publisher's key and QoS. */
z_result_t z_publisher_put(const z_loaned_publisher_t *pub, z_moved_bytes_t *payload,
                           const z_publisher_put_options_t *options);
/* Publishes a deletion with the publisher's key. */
z_result_t z_publisher_delete(const z_loaned_publisher_t *pub, const z_publisher_delete_options_t *options);
const z_loaned_keyexpr_t *z_publisher_keyexpr(const z_loaned_publisher_t *publisher);

/* ---- subscription ---- */
void z_subscriber_options_default(z_subscriber_options_t *options);
/* Declares a subscriber; `callback` (consumed) gets every matching sample. */
z_result_t z_declare_subscriber(const z_loaned_session_t *zs, z_owned_subscriber_t *sub,
                                const z_loaned_keyexpr_t *keyexpr, z_moved_closure_sample_t *callback,
                                const z_subscriber_options_t *options);
/* Same, living until the session ends. */
z_result_t z_declare_background_subscriber(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                                           z_moved_closure_sample_t *callback, const z_subscriber_options_t *options);
/* Undeclares a subscriber and drops its callback. */
z_result_t z_undeclare_subscriber(z_moved_subscriber_t *sub);
const z_loaned_keyexpr_t *z_subscriber_keyexpr(const z_loaned_subscriber_t *subscriber);

/* The sample's key. */
const z_loaned_keyexpr_t *z_sample_keyexpr(const z_loaned_sample_t *sample);
/* The sample's payload (a view, valid during the callback). */
const z_loaned_bytes_t *z_sample_payload(const z_loaned_sample_t *sample);
/* The timestamp, or NULL when the sample has none. */
const z_timestamp_t *z_sample_timestamp(const z_loaned_sample_t *sample);
const z_loaned_encoding_t *z_sample_encoding(const z_loaned_sample_t *sample);
z_sample_kind_t z_sample_kind(const z_loaned_sample_t *sample);
/* The attachment, or NULL when the sample has none. */
const z_loaned_bytes_t *z_sample_attachment(const z_loaned_sample_t *sample);
z_priority_t z_sample_priority(const z_loaned_sample_t *sample);
z_congestion_control_t z_sample_congestion_control(const z_loaned_sample_t *sample);
bool z_sample_express(const z_loaned_sample_t *sample);
z_reliability_t z_sample_reliability(const z_loaned_sample_t *sample);
uint64_t z_timestamp_ntp64_time(const z_timestamp_t *ts);
z_id_t z_timestamp_id(const z_timestamp_t *ts);

/* ---- query ---- */
z_query_consolidation_t z_query_consolidation_default(void);
z_query_consolidation_t z_query_consolidation_auto(void);
z_query_consolidation_t z_query_consolidation_latest(void);
z_query_consolidation_t z_query_consolidation_monotonic(void);
z_query_consolidation_t z_query_consolidation_none(void);
z_query_target_t z_query_target_default(void);
void z_get_options_default(z_get_options_t *options);
/* Sends a query; replies go to `callback`, whose drop runs when the query
 * ends (final reply or timeout). */
z_result_t z_get(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr, const char *parameters,
                 z_moved_closure_reply_t *callback, z_get_options_t *options);
/* True for a sample reply, false for an error reply. */
void z_querier_options_default(z_querier_options_t *options);
void z_querier_get_options_default(z_querier_get_options_t *options);
/* Declares a querier: a key expression and get options reused by z_querier_get. */
z_result_t z_declare_querier(const z_loaned_session_t *zs, z_owned_querier_t *querier,
                             const z_loaned_keyexpr_t *keyexpr, z_querier_options_t *options);
z_result_t z_undeclare_querier(z_moved_querier_t *querier);
/* A get on the querier's key with its options. */
z_result_t z_querier_get(const z_loaned_querier_t *querier, const char *parameters, z_moved_closure_reply_t *callback,
                         z_querier_get_options_t *options);
const z_loaned_keyexpr_t *z_querier_keyexpr(const z_loaned_querier_t *querier);
bool z_reply_is_ok(const z_loaned_reply_t *reply);
/* The sample of a successful reply. */
const z_loaned_sample_t *z_reply_ok(const z_loaned_reply_t *reply);
/* The error of an error reply. */
const z_loaned_reply_err_t *z_reply_err(const z_loaned_reply_t *reply);
bool z_reply_replier_id(const z_loaned_reply_t *reply, z_entity_global_id_t *out_id);
const z_loaned_bytes_t *z_reply_err_payload(const z_loaned_reply_err_t *reply_err);
const z_loaned_encoding_t *z_reply_err_encoding(const z_loaned_reply_err_t *reply_err);

/* ---- queryable ---- */
void z_queryable_options_default(z_queryable_options_t *options);
/* Declares a queryable; `callback` (consumed) gets every matching query. */
z_result_t z_declare_queryable(const z_loaned_session_t *zs, z_owned_queryable_t *queryable,
                               const z_loaned_keyexpr_t *keyexpr, z_moved_closure_query_t *callback,
                               const z_queryable_options_t *options);
z_result_t z_declare_background_queryable(const z_loaned_session_t *zs, const z_loaned_keyexpr_t *keyexpr,
                                          z_moved_closure_query_t *callback, const z_queryable_options_t *options);
/* Undeclares a queryable and drops its callback. */
z_result_t z_undeclare_queryable(z_moved_queryable_t *queryable);
const z_loaned_keyexpr_t *z_queryable_keyexpr(const z_loaned_queryable_t *queryable);
/* The key expression the query was sent on. */
const z_loaned_keyexpr_t *z_query_keyexpr(const z_loaned_query_t *query);
/* The selector parameters ("" when none). */
void z_query_parameters(const z_loaned_query_t *query, z_view_string_t *parameters);
/* The value sent with the query (empty when none). */
const z_loaned_bytes_t *z_query_payload(const z_loaned_query_t *query);
const z_loaned_encoding_t *z_query_encoding(const z_loaned_query_t *query);
const z_loaned_bytes_t *z_query_attachment(const z_loaned_query_t *query);
z_reply_keyexpr_t z_query_accepts_replies(const z_loaned_query_t *query);
void z_query_reply_options_default(z_query_reply_options_t *options);
void z_query_reply_del_options_default(z_query_reply_del_options_t *options);
void z_query_reply_err_options_default(z_query_reply_err_options_t *options);
/* Keeps a query after its callback (one pool block holds its key, parameters,
 * payload and attachment); its ResponseFinal is sent when the last copy is
 * dropped. Z_ENOMEM when the pool or the open-query table is full. */
z_result_t z_query_clone(z_owned_query_t *dst, const z_loaned_query_t *src);
/* Replies to a query (from its callback, or later through a z_query_clone copy). */
z_result_t z_query_reply(const z_loaned_query_t *query, const z_loaned_keyexpr_t *keyexpr, z_moved_bytes_t *payload,
                         const z_query_reply_options_t *options);
/* Replies with a deletion, from inside the queryable's callback. */
z_result_t z_query_reply_del(const z_loaned_query_t *query, const z_loaned_keyexpr_t *keyexpr,
                             const z_query_reply_del_options_t *options);
/* Replies with an error, from inside the queryable's callback. */
z_result_t z_query_reply_err(const z_loaned_query_t *query, z_moved_bytes_t *payload,
                             const z_query_reply_err_options_t *options);

/* ---- batching ---- */
#if Z_FEATURE_BATCHING == 1
/* From now on messages are batched until flushed (express ones still leave at once). */
z_result_t zp_batch_start(const z_loaned_session_t *zs);
/* Sends the batched messages now. */
z_result_t zp_batch_flush(const z_loaned_session_t *zs);
/* Stops batching and sends what was batched. */
z_result_t zp_batch_stop(const z_loaned_session_t *zs);
#endif

/* ---- congestion control ---- */
/*
 * Messages the session dropped under congestion control DROP: puts, deletes,
 * gets and replies sent with Z_CONGESTION_CONTROL_DROP whose batch the link
 * could not take within ZP_CONGESTION_DROP_WAIT_MS. Counted from z_open
 * (across reconnections); wraps at 2^32.
 */
uint32_t zp_dropped_messages(const z_loaned_session_t *zs);

/* ---- run models ---- */
#if Z_FEATURE_MULTI_THREAD == 1
void zp_task_read_options_default(zp_task_read_options_t *options);
/* Starts the read task (z_open does it by default). */
z_result_t zp_start_read_task(z_loaned_session_t *zs, const zp_task_read_options_t *options);
/* Stops the read task and waits for it. */
z_result_t zp_stop_read_task(z_loaned_session_t *zs);
bool zp_read_task_is_running(const z_loaned_session_t *zs);
void zp_task_lease_options_default(zp_task_lease_options_t *options);
/* Starts the lease task: keep-alive, lease, query timeouts, reconnection. */
z_result_t zp_start_lease_task(z_loaned_session_t *zs, const zp_task_lease_options_t *options);
/* Stops the lease task and waits for it. */
z_result_t zp_stop_lease_task(z_loaned_session_t *zs);
bool zp_lease_task_is_running(const z_loaned_session_t *zs);
#endif
/* Single-threaded drivers (in multi-thread builds: only with the tasks stopped). */
void zp_read_options_default(zp_read_options_t *options);
/* Reads and processes what arrived (waits at most Z_CONFIG_SOCKET_TIMEOUT ms). */
z_result_t zp_read(const z_loaned_session_t *zs, const zp_read_options_t *options);
void zp_send_keep_alive_options_default(zp_send_keep_alive_options_t *options);
/* Sends a KeepAlive now. */
z_result_t zp_send_keep_alive(const z_loaned_session_t *zs, const zp_send_keep_alive_options_t *options);
void zp_send_join_options_default(zp_send_join_options_t *options);
/* Sends a Join now (peer mode). */
z_result_t zp_send_join(const z_loaned_session_t *zs, const zp_send_join_options_t *options);
/* One step of the session: read, keep-alive/join, lease check, query
 * timeouts, reconnection. Returns false once the session is closed. */
bool zp_spin_once(const z_loaned_session_t *zs);

/* ---- system ---- */
z_result_t z_sleep_us(size_t time);
z_result_t z_sleep_ms(size_t time);
z_result_t z_sleep_s(size_t time);
/* A monotonic instant (microsecond resolution). */
z_clock_t z_clock_now(void);
unsigned long z_clock_elapsed_us(z_clock_t *time);
unsigned long z_clock_elapsed_ms(z_clock_t *time);
unsigned long z_clock_elapsed_s(z_clock_t *time);
/* Moves an instant forward (deadlines for z_condvar_timedwait). */
void z_clock_advance_us(z_clock_t *clock, unsigned long duration);
void z_clock_advance_ms(z_clock_t *clock, unsigned long duration);
void z_clock_advance_s(z_clock_t *clock, unsigned long duration);
z_time_t z_time_now(void);
unsigned long z_time_elapsed_ms(z_time_t *time);
unsigned long z_time_elapsed_s(z_time_t *time);
uint8_t z_random_u8(void);
uint16_t z_random_u16(void);
uint32_t z_random_u32(void);
uint64_t z_random_u64(void);
void z_random_fill(void *buf, size_t len);
/* Heap helpers of the POSIX port for applications (the library never calls them). */
void *z_malloc(size_t size);
void *z_realloc(void *ptr, size_t size);
void z_free(void *ptr);

#if Z_FEATURE_MULTI_THREAD == 1
_ZP_OWNED_DECL(mutex)
_ZP_OWNED_DECL(condvar)
/* A mutex for the application (POSIX port). */
z_result_t z_mutex_init(z_owned_mutex_t *m);
z_result_t z_mutex_lock(z_loaned_mutex_t *m);
z_result_t z_mutex_unlock(z_loaned_mutex_t *m);
z_result_t z_condvar_init(z_owned_condvar_t *cv);
z_result_t z_condvar_signal(z_loaned_condvar_t *cv);
/* Waits on the condition variable with `m` locked. */
z_result_t z_condvar_wait(z_loaned_condvar_t *cv, z_loaned_mutex_t *m);
/* Waits as z_condvar_wait, at most until `abstime` (a z_clock_now() instant);
 * Z_ETIMEDOUT once it has passed. */
z_result_t z_condvar_timedwait(z_loaned_condvar_t *cv, z_loaned_mutex_t *m, const z_clock_t *abstime);
z_result_t z_task_init(z_owned_task_t *task, z_task_attr_t *attr, void *(*fun)(void *), void *arg);
z_result_t z_task_join(z_moved_task_t *task);
z_moved_task_t *z_task_move(z_owned_task_t *task);
#endif

#ifdef __cplusplus
}
#endif

#endif
