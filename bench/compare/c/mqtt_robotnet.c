/*
 * The robot net (robotnet.h) over MQTT, through the mosquitto broker the driver starts
 * (libmosquitto, Debian's libmosquitto-dev): each node is one client (MQTT 3.1.1, clean
 * session, Nagle's algorithm off) whose network loop runs on a thread of its own
 * (`mosquitto_loop_start`); the node's thread publishes into it. The controller subscribes to
 * `robot/+/state` and `robot/+/event`, each sensor to its `robot/<i>/cmd`. QoS from --qos
 * (0 by default) for every message; MQTT has no priorities: events travel as the rest.
 */
#include <mosquitto.h>

#include "robotnet.h"

static const char *TOPOLOGY = "broker";
static struct mosquitto *clients[RN_NODES];
static atomic_int subscribed[RN_NODES];
static atomic_int connected[RN_NODES];
static int QOS;
/* Each client's user data: a pointer to its node's index (libmosquitto passes the client
   itself where the user data is NULL, so an index cannot be passed as a pointer). */
static int node_of[RN_NODES];

static int sys_publish(int node, int kind, int to, const uint8_t *payload) {
    char topic[32];
    rn_topic(topic, sizeof topic, kind, node, to);
    return mosquitto_publish(clients[node], NULL, topic, RN_PAYLOAD, payload, QOS, false) ==
                   MOSQ_ERR_SUCCESS
               ? 0
               : -1;
}

static void sys_tick_done(int node) { (void)node; }

static void on_connect(struct mosquitto *m, void *u, int rc) {
    (void)m;
    if (rc == 0) atomic_store(&connected[*(int *)u], 1);
}

static void on_subscribe(struct mosquitto *m, void *u, int mid, int n, const int *granted) {
    (void)m, (void)mid, (void)n, (void)granted;
    atomic_fetch_add(&subscribed[*(int *)u], 1);
}

static void on_message(struct mosquitto *m, void *u, const struct mosquitto_message *msg) {
    (void)m;
    const char *topic = msg->topic;
    int kind = rn_kind_of(topic);
    rn_received(kind, *(int *)u, msg->payload, (size_t)msg->payloadlen);
}

static int sys_start(const char *host, int port, int qos) {
    QOS = qos;
    mosquitto_lib_init();
    for (int i = 0; i < RN_NODES; i++) {
        node_of[i] = i;
        struct mosquitto *m = mosquitto_new(NULL, true, &node_of[i]);
        if (!m) return -1;
        clients[i] = m;
        mosquitto_connect_callback_set(m, on_connect);
        mosquitto_subscribe_callback_set(m, on_subscribe);
        mosquitto_message_callback_set(m, on_message);
        mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
        mosquitto_int_option(m, MOSQ_OPT_SEND_MAXIMUM, 1000);
        if (mosquitto_connect(m, host, port, 60) != MOSQ_ERR_SUCCESS) {
            fprintf(stderr, "connect %s:%d failed\n", host, port);
            return -1;
        }
        mosquitto_loop_start(m);
    }
    double give_up = (double)rn_now_ns() / 1e9 + 10;
    for (int i = 0; i < RN_NODES; i++) {
        while (!atomic_load(&connected[i])) {
            if ((double)rn_now_ns() / 1e9 > give_up) {
                fprintf(stderr, "no CONNACK for node %d\n", i);
                return -1;
            }
            usleep(1000);
        }
        char topic[32];
        int wanted = 1;
        if (i == RN_CONTROLLER) {
            mosquitto_subscribe(clients[i], NULL, "robot/+/state", qos);
            mosquitto_subscribe(clients[i], NULL, "robot/+/event", qos);
            wanted = 2;
        } else {
            snprintf(topic, sizeof topic, "robot/%d/cmd", i);
            mosquitto_subscribe(clients[i], NULL, topic, qos);
        }
        while (atomic_load(&subscribed[i]) < wanted) {
            if ((double)rn_now_ns() / 1e9 > give_up) {
                fprintf(stderr, "no SUBACK for node %d\n", i);
                return -1;
            }
            usleep(1000);
        }
    }
    return 0;
}

int main(int argc, char **argv) { return rn_main(argc, argv); }
