/*
 * The robot net (robotnet.h) over ZeroMQ, peer to peer (libzmq, Debian's libzmq3-dev): each
 * node binds a PUB socket on 127.0.0.1, PORT + its index; the controller's SUB socket
 * connects to the nine sensors' and takes their state and events, each sensor's SUB socket
 * connects to the controller's and takes its own commands (prefix `robot/<i>/cmd`). A message
 * is two frames, the topic and the payload. Default options: high-water marks of 1000
 * messages, beyond which a PUB socket drops (counted as lost); ZeroMQ has no priorities, so
 * events travel as the rest. A socket is used by one thread only: a node's PUB by its
 * publishing thread, its SUB by a receiving thread of its own.
 */
#include <zmq.h>

#include "robotnet.h"

static const char *TOPOLOGY = "p2p";
static void *ctx;
static void *pubs[RN_NODES];
static void *subs[RN_NODES];

static int check(int rc, const char *what) {
    if (rc < 0) fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
    return rc;
}

static int sys_publish(int node, int kind, int to, const uint8_t *payload) {
    char topic[32];
    rn_topic(topic, sizeof topic, kind, node, to);
    if (zmq_send(pubs[node], topic, strlen(topic), ZMQ_SNDMORE) < 0) return -1;
    return zmq_send(pubs[node], payload, RN_PAYLOAD, 0) < 0 ? -1 : 0;
}

static void sys_tick_done(int node) { (void)node; }

/* A node's receiving thread: topic then payload, until the run ends. */
static void *receive(void *arg) {
    int node = (int)(intptr_t)arg;
    char topic[64];
    uint8_t payload[256];
    while (!atomic_load(&rn->abort)) {
        int n = zmq_recv(subs[node], topic, sizeof topic - 1, 0);
        if (n < 0) continue; /* timeout: look at rn->abort */
        topic[n < (int)sizeof topic - 1 ? n : (int)sizeof topic - 1] = 0;
        int more = 0;
        size_t more_size = sizeof more;
        zmq_getsockopt(subs[node], ZMQ_RCVMORE, &more, &more_size);
        if (!more) continue;
        int len = zmq_recv(subs[node], payload, sizeof payload, 0);
        if (len < 0) continue;
        int kind = rn_kind_of(topic);
        rn_received(kind, node, payload, (size_t)len);
    }
    return NULL;
}

static int sys_start(const char *host, int port, int qos) {
    (void)qos;
    ctx = zmq_ctx_new();
    char ep[300];
    int timeout_ms = 100;
    for (int i = 0; i < RN_NODES; i++) {
        pubs[i] = zmq_socket(ctx, ZMQ_PUB);
        snprintf(ep, sizeof ep, "tcp://%s:%d", host, port + i);
        if (check(zmq_bind(pubs[i], ep), ep) < 0) return -1;
        subs[i] = zmq_socket(ctx, ZMQ_SUB);
        zmq_setsockopt(subs[i], ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    }
    for (int i = 0; i < RN_SENSORS; i++) {
        /* The controller takes every sensor's state and events. */
        snprintf(ep, sizeof ep, "tcp://%s:%d", host, port + i);
        if (check(zmq_connect(subs[RN_CONTROLLER], ep), ep) < 0) return -1;
        /* Each sensor takes its own commands. */
        char prefix[32];
        snprintf(prefix, sizeof prefix, "robot/%d/cmd", i);
        zmq_setsockopt(subs[i], ZMQ_SUBSCRIBE, prefix, strlen(prefix));
        snprintf(ep, sizeof ep, "tcp://%s:%d", host, port + RN_CONTROLLER);
        if (check(zmq_connect(subs[i], ep), ep) < 0) return -1;
    }
    zmq_setsockopt(subs[RN_CONTROLLER], ZMQ_SUBSCRIBE, "robot/", 6);
    for (int i = 0; i < RN_NODES; i++) {
        pthread_t t;
        pthread_create(&t, NULL, receive, (void *)(intptr_t)i);
        pthread_detach(t);
    }
    return 0;
}

int main(int argc, char **argv) { return rn_main(argc, argv); }
