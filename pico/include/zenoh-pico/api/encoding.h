/* Predefined encodings (ids 0..52 of the protocol). Generated list; see src/api/encoding.c. */
#ifndef ZENOH_PICO_API_ENCODING_H
#define ZENOH_PICO_API_ENCODING_H

#include "zenoh-pico/api/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(function suffix, id, name) for every predefined encoding. */
#define ZP_ENCODING_LIST(X) \
    X(zenoh_bytes, 0, "zenoh/bytes") \
    X(zenoh_string, 1, "zenoh/string") \
    X(zenoh_serialized, 2, "zenoh/serialized") \
    X(application_octet_stream, 3, "application/octet-stream") \
    X(text_plain, 4, "text/plain") \
    X(application_json, 5, "application/json") \
    X(text_json, 6, "text/json") \
    X(application_cdr, 7, "application/cdr") \
    X(application_cbor, 8, "application/cbor") \
    X(application_yaml, 9, "application/yaml") \
    X(text_yaml, 10, "text/yaml") \
    X(text_json5, 11, "text/json5") \
    X(application_python_serialized_object, 12, "application/python-serialized-object") \
    X(application_protobuf, 13, "application/protobuf") \
    X(application_java_serialized_object, 14, "application/java-serialized-object") \
    X(application_openmetrics_text, 15, "application/openmetrics-text") \
    X(image_png, 16, "image/png") \
    X(image_jpeg, 17, "image/jpeg") \
    X(image_gif, 18, "image/gif") \
    X(image_bmp, 19, "image/bmp") \
    X(image_webp, 20, "image/webp") \
    X(application_xml, 21, "application/xml") \
    X(application_x_www_form_urlencoded, 22, "application/x-www-form-urlencoded") \
    X(text_html, 23, "text/html") \
    X(text_xml, 24, "text/xml") \
    X(text_css, 25, "text/css") \
    X(text_javascript, 26, "text/javascript") \
    X(text_markdown, 27, "text/markdown") \
    X(text_csv, 28, "text/csv") \
    X(application_sql, 29, "application/sql") \
    X(application_coap_payload, 30, "application/coap-payload") \
    X(application_json_patch_json, 31, "application/json-patch+json") \
    X(application_json_seq, 32, "application/json-seq") \
    X(application_jsonpath, 33, "application/jsonpath") \
    X(application_jwt, 34, "application/jwt") \
    X(application_mp4, 35, "application/mp4") \
    X(application_soap_xml, 36, "application/soap+xml") \
    X(application_yang, 37, "application/yang") \
    X(audio_aac, 38, "audio/aac") \
    X(audio_flac, 39, "audio/flac") \
    X(audio_mp4, 40, "audio/mp4") \
    X(audio_ogg, 41, "audio/ogg") \
    X(audio_vorbis, 42, "audio/vorbis") \
    X(video_h261, 43, "video/h261") \
    X(video_h263, 44, "video/h263") \
    X(video_h264, 45, "video/h264") \
    X(video_h265, 46, "video/h265") \
    X(video_h266, 47, "video/h266") \
    X(video_mp4, 48, "video/mp4") \
    X(video_ogg, 49, "video/ogg") \
    X(video_raw, 50, "video/raw") \
    X(video_vp8, 51, "video/vp8") \
    X(video_vp9, 52, "video/vp9")

#define _ZP_ENCODING_DECL(suffix, id, name) const z_loaned_encoding_t *z_encoding_##suffix(void);
ZP_ENCODING_LIST(_ZP_ENCODING_DECL)
const z_loaned_encoding_t *z_encoding_loan_default(void);

#ifdef __cplusplus
}
#endif

#endif
