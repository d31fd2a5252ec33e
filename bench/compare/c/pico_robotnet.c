/*
 * The robot net (robotnet.h) over weft-pico: each node is one weft-pico client session of
 * the router the driver starts, with its read and lease tasks on threads of their own
 * (the POSIX build's multi-threaded model) and automatic batching. Every stream is a
 * declared publisher, congestion control block as in weft's example (its key named by a
 * declared id once the router confirmed it); events are RealTime and express. The
 * controller has two wildcard subscribers, one for every sensor's state and one for the
 * events, each sensor one for its `robot/<i>/cmd`. Built against a weft-pico library
 * configured for ten sessions and ten publishers per session (bench/compare.sh).
 */
#include "zenoh-pico.h"

#include "robotnet.h"

static const char *TOPOLOGY = "routed";
static z_owned_session_t sessions[RN_NODES];
/* [node][0]: state (sensors) or event (controller); [node][1]: event (sensors);
   the controller's commands: cmd_pubs[sensor]. */
static z_owned_publisher_t pubs[RN_NODES][2];
static z_owned_publisher_t cmd_pubs[RN_SENSORS];
static z_owned_subscriber_t subs[RN_NODES][2];

static int check(z_result_t r, const char *what) {
    if (r != Z_OK) fprintf(stderr, "%s: error %d\n", what, (int)r);
    return r == Z_OK ? 0 : -1;
}

static int sys_publish(int node, int kind, int to, const uint8_t *payload) {
    z_owned_publisher_t *p;
    if (kind == RN_COMMAND) p = &cmd_pubs[to];
    else if (kind == RN_EVENT) p = node == RN_CONTROLLER ? &pubs[node][0] : &pubs[node][1];
    else p = &pubs[node][0];
    /* no copy: a put encodes the payload before it returns */
    z_owned_bytes_t b;
    if (z_bytes_from_static_buf(&b, payload, RN_PAYLOAD) != Z_OK) return -1;
    return z_publisher_put(z_loan(*p), z_move(b), NULL) == Z_OK ? 0 : -1;
}

static void sys_tick_done(int node) { (void)node; }

/* A sample for node `ctx`: its kind from the key, its first bytes copied out. */
static void on_sample(z_loaned_sample_t *sample, void *ctx) {
    int node = (int)(intptr_t)ctx;
    z_view_string_t key;
    z_keyexpr_as_view_string(z_sample_keyexpr(sample), &key);
    char topic[64];
    size_t n = z_string_len(z_loan(key));
    if (n >= sizeof topic) return;
    memcpy(topic, z_string_data(z_loan(key)), n);
    topic[n] = 0;
    uint8_t payload[RN_PAYLOAD];
    z_bytes_reader_t reader = z_bytes_get_reader(z_sample_payload(sample));
    size_t len = z_bytes_reader_read(&reader, payload, sizeof payload);
    rn_received(rn_kind_of(topic), node, payload, len);
}

static int declare_pub(int node, z_owned_publisher_t *p, const char *key, bool event) {
    z_view_keyexpr_t ke;
    if (check(z_view_keyexpr_from_str(&ke, key), key) < 0) return -1;
    z_publisher_options_t o;
    z_publisher_options_default(&o);
    o.congestion_control = Z_CONGESTION_CONTROL_BLOCK;
    if (event) {
        o.priority = Z_PRIORITY_REAL_TIME;
        o.is_express = true;
    }
    return check(z_declare_publisher(z_loan(sessions[node]), p, z_loan(ke), &o), key);
}

static int declare_sub(int node, z_owned_subscriber_t *s, const char *key) {
    z_view_keyexpr_t ke;
    if (check(z_view_keyexpr_from_str(&ke, key), key) < 0) return -1;
    z_owned_closure_sample_t cb;
    z_closure(&cb, on_sample, NULL, (void *)(intptr_t)node);
    return check(z_declare_subscriber(z_loan(sessions[node]), s, z_loan(ke), z_move(cb), NULL), key);
}

static int sys_start(const char *host, int port, int qos) {
    (void)qos;
    char locator[300], key[64];
    snprintf(locator, sizeof locator, "tcp/%s:%d", host, port);
    for (int i = 0; i < RN_NODES; i++) {
        z_owned_config_t config;
        z_config_default(&config);
        zp_config_insert(z_loan_mut(config), Z_CONFIG_MODE_KEY, "client");
        zp_config_insert(z_loan_mut(config), Z_CONFIG_CONNECT_KEY, locator);
        if (check(z_open(&sessions[i], z_move(config), NULL), locator) < 0) return -1;
    }
    if (declare_sub(RN_CONTROLLER, &subs[RN_CONTROLLER][0], "robot/*/state") < 0 ||
        declare_sub(RN_CONTROLLER, &subs[RN_CONTROLLER][1], "robot/*/event") < 0)
        return -1;
    snprintf(key, sizeof key, "robot/%d/event", RN_CONTROLLER);
    if (declare_pub(RN_CONTROLLER, &pubs[RN_CONTROLLER][0], key, true) < 0) return -1;
    for (int i = 0; i < RN_SENSORS; i++) {
        snprintf(key, sizeof key, "robot/%d/cmd", i);
        if (declare_sub(i, &subs[i][0], key) < 0) return -1;
        if (declare_pub(RN_CONTROLLER, &cmd_pubs[i], key, false) < 0) return -1;
        snprintf(key, sizeof key, "robot/%d/state", i);
        if (declare_pub(i, &pubs[i][0], key, false) < 0) return -1;
        snprintf(key, sizeof key, "robot/%d/event", i);
        if (declare_pub(i, &pubs[i][1], key, true) < 0) return -1;
    }
    return 0;
}

int main(int argc, char **argv) { return rn_main(argc, argv); }
