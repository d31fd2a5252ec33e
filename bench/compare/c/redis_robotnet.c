/*
 * The robot net (robotnet.h) over Redis pub/sub, through the redis-server the driver starts
 * (hiredis, Debian's libhiredis-dev): each node has a connection that PUBLISHes and one that
 * SUBSCRIBEs, read by a thread of its own. The controller subscribes to `robot/<i>/state`
 * and `robot/<i>/event`, each sensor to its `robot/<i>/cmd`. PUBLISHes are pipelined, as
 * redis-benchmark does: a tick's messages are written at once on a non-blocking
 * connection, and the replies that have come are read then, never waited for (waiting for
 * one round trip a tick made every tick late). Redis has no priorities: events travel as the
 * rest.
 */
#include <fcntl.h>
#include <hiredis/hiredis.h>

#include "robotnet.h"

static const char *TOPOLOGY = "broker";
static redisContext *pubs[RN_NODES];
static redisContext *subs[RN_NODES];
static int queued[RN_NODES];

static redisContext *connect_to(const char *host, int port) {
    redisContext *c = redisConnect(host, port);
    if (!c || c->err) {
        fprintf(stderr, "connect %s:%d: %s\n", host, port, c ? c->errstr : "no memory");
        return NULL;
    }
    return c;
}

static int sys_publish(int node, int kind, int to, const uint8_t *payload) {
    char topic[32];
    rn_topic(topic, sizeof topic, kind, node, to);
    if (redisAppendCommand(pubs[node], "PUBLISH %s %b", topic, payload, (size_t)RN_PAYLOAD) !=
        REDIS_OK)
        return -1;
    queued[node]++;
    return 0;
}

static void sys_tick_done(int node) {
    redisContext *c = pubs[node];
    int done = 0;
    while (!done) {
        if (redisBufferWrite(c, &done) != REDIS_OK) return;
    }
    /* The replies that have come (a non-blocking read). */
    if (redisBufferRead(c) != REDIS_OK) return;
    void *reply = NULL;
    while (queued[node] > 0 && redisGetReplyFromReader(c, &reply) == REDIS_OK && reply) {
        freeReplyObject(reply);
        reply = NULL;
        queued[node]--;
    }
}

/* A node's subscribing connection: ["message", channel, payload] until the run ends. */
static void *receive(void *arg) {
    int node = (int)(intptr_t)arg;
    while (!atomic_load(&rn->abort)) {
        redisReply *r = NULL;
        if (redisGetReply(subs[node], (void **)&r) != REDIS_OK || !r) break;
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
            !strcmp(r->element[0]->str, "message")) {
            const char *topic = r->element[1]->str;
            int kind = rn_kind_of(topic);
            rn_received(kind, node, (const uint8_t *)r->element[2]->str, r->element[2]->len);
        }
        freeReplyObject(r);
    }
    return NULL;
}

static int sys_start(const char *host, int port, int qos) {
    (void)qos;
    for (int i = 0; i < RN_NODES; i++) {
        if (!(pubs[i] = connect_to(host, port)) || !(subs[i] = connect_to(host, port)))
            return -1;
        /* The publishing connection never waits: writes and reads what the socket allows. */
        fcntl(pubs[i]->fd, F_SETFL, fcntl(pubs[i]->fd, F_GETFL) | O_NONBLOCK);
        pubs[i]->flags &= ~REDIS_BLOCK;
        char channels[1024];
        size_t used = 0;
        if (i == RN_CONTROLLER) {
            for (int s = 0; s < RN_SENSORS; s++)
                used += (size_t)snprintf(channels + used, sizeof channels - used,
                                         "robot/%d/state robot/%d/event ", s, s);
        } else {
            used += (size_t)snprintf(channels, sizeof channels, "robot/%d/cmd ", i);
        }
        /* SUBSCRIBE with the channels as separate arguments. */
        const char *argv[2 * RN_SENSORS + 1];
        size_t lens[2 * RN_SENSORS + 1];
        int argc = 0;
        argv[argc] = "SUBSCRIBE";
        lens[argc++] = 9;
        for (char *tok = strtok(channels, " "); tok; tok = strtok(NULL, " ")) {
            argv[argc] = tok;
            lens[argc++] = strlen(tok);
        }
        redisReply *r = redisCommandArgv(subs[i], argc, argv, lens);
        if (!r) {
            fprintf(stderr, "subscribe: %s\n", subs[i]->errstr);
            return -1;
        }
        freeReplyObject(r);
        /* The confirmations of the other channels. */
        for (int c = 2; c < argc; c++) {
            if (redisGetReply(subs[i], (void **)&r) != REDIS_OK) return -1;
            freeReplyObject(r);
        }
    }
    for (int i = 0; i < RN_NODES; i++) {
        pthread_t t;
        pthread_create(&t, NULL, receive, (void *)(intptr_t)i);
        pthread_detach(t);
    }
    return 0;
}

int main(int argc, char **argv) { return rn_main(argc, argv); }
