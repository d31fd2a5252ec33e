/*
 * MQTT client of bench/compare.sh, against libmosquitto (Debian's libmosquitto-dev), through
 * a mosquitto broker that the driver starts: MQTT 3.1.1, clean sessions, topic `thr` (or
 * `ping` and `pong`), QoS from --qos (0 or 1). The client runs its network loop in the
 * calling thread (no loop thread), Nagle's algorithm off; the publisher keeps at most
 * WINDOW messages not yet written (QoS 0) or not yet acknowledged (QoS 1), so that its
 * memory stays bounded. See bench.h for the command line and the output.
 */
#include <mosquitto.h>

#include "bench.h"

/* Messages the publisher may have queued or unacknowledged. */
#define WINDOW 1000

static struct bench_args A;
static struct bench_rounds R;
static int done;
static int connected;
static double *rtt;
static uint64_t trips;
static double t_sent;

static void on_connect(struct mosquitto *m, void *u, int rc) {
    (void)m, (void)u;
    if (rc == 0) connected = 1;
}

static void on_subscribe(struct mosquitto *m, void *u, int mid, int n, const int *granted) {
    (void)m, (void)u, (void)mid, (void)n, (void)granted;
    connected = 2;
}

/* Messages the library reports written (QoS 0) or acknowledged (QoS 1). */
static uint64_t published;

static void on_publish(struct mosquitto *m, void *u, int mid) {
    (void)m, (void)u, (void)mid;
    published++;
}

static void on_message_sub(struct mosquitto *m, void *u, const struct mosquitto_message *msg) {
    (void)m, (void)u;
    bench_seq_record(&R, msg->payload, (size_t)msg->payloadlen);
    if (bench_rounds_tick(&R, (size_t)msg->payloadlen)) done = 1;
}

static void on_message_pong(struct mosquitto *m, void *u, const struct mosquitto_message *msg) {
    (void)u;
    mosquitto_publish(m, NULL, "pong", msg->payloadlen, msg->payload, A.qos, false);
}

static void on_message_ping(struct mosquitto *m, void *u, const struct mosquitto_message *msg) {
    (void)m, (void)u, (void)msg;
    if (trips >= BENCH_WARMUP) rtt[trips - BENCH_WARMUP] = bench_now() - t_sent;
    trips++;
    done = 1;
}

/* One turn of the network loop; then writes what a callback queued (a packet queued inside a
   callback waits for the next turn's select otherwise). */
static int turn(struct mosquitto *m, int timeout_ms) {
    int rc = mosquitto_loop(m, timeout_ms, 64);
    if (rc == MOSQ_ERR_SUCCESS && mosquitto_want_write(m)) rc = mosquitto_loop_write(m, 64);
    return rc;
}

static struct mosquitto *client(const char *sub_topic) {
    mosquitto_lib_init();
    struct mosquitto *m = mosquitto_new(NULL, true, NULL);
    if (!m) {
        fprintf(stderr, "mosquitto_new failed\n");
        exit(1);
    }
    mosquitto_connect_callback_set(m, on_connect);
    mosquitto_subscribe_callback_set(m, on_subscribe);
    /* QoS 1 messages in flight before PUBACKs (libmosquitto's default is 20). */
    mosquitto_int_option(m, MOSQ_OPT_SEND_MAXIMUM, 1000);
    /* Nagle's algorithm off, as the broker's set_tcp_nodelay: small packets leave at once. */
    mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
    double give_up = bench_now() + 10;
    while (mosquitto_connect(m, A.host, A.port, 60) != MOSQ_ERR_SUCCESS) {
        if (bench_now() > give_up) {
            fprintf(stderr, "connect %s:%d failed\n", A.host, A.port);
            exit(1);
        }
        usleep(20000);
    }
    while (connected < 1 && bench_now() < give_up) turn(m, 100);
    if (sub_topic) {
        mosquitto_subscribe(m, NULL, sub_topic, A.qos);
        while (connected < 2 && bench_now() < give_up) turn(m, 100);
    }
    if (connected < (sub_topic ? 2 : 1)) {
        fprintf(stderr, "no CONNACK or SUBACK from %s:%d\n", A.host, A.port);
        exit(1);
    }
    return m;
}

int main(int argc, char **argv) {
    bench_parse(argc, argv, &A);
    if (!strcmp(A.mode, "sub")) {
        R.a = &A;
        struct mosquitto *m = client("thr");
        mosquitto_message_callback_set(m, on_message_sub);
        printf("subscribed\n");
        double give_up = bench_now() + A.max_seconds;
        while (!done && bench_now() < give_up) {
            if (turn(m, 100) != MOSQ_ERR_SUCCESS) break;
        }
        if (!done) bench_rounds_print_median(&R);
        bench_exit(0);
    } else if (!strcmp(A.mode, "pub")) {
        struct mosquitto *m = client(NULL);
        mosquitto_publish_callback_set(m, on_publish);
        char *buf = calloc(1, A.size ? A.size : 1);
        double end = bench_now() + A.duration;
        uint64_t sent = 0;
        while (bench_now() < end) {
            if (A.seq) bench_put_seq(buf, sent);
            if (mosquitto_publish(m, NULL, "thr", (int)A.size, buf, A.qos, false) != MOSQ_ERR_SUCCESS) {
                fprintf(stderr, "publish failed\n");
                bench_exit(1);
            }
            sent++;
            if (sent % 64 == 0) turn(m, 0);
            while (sent - published > WINDOW && bench_now() < end) turn(m, 10);
        }
        printf("sent=%llu payload=%zu\n", (unsigned long long)sent, A.size);
        bench_exit(0);
    } else if (!strcmp(A.mode, "ping")) {
        rtt = malloc(sizeof(double) * A.samples);
        struct mosquitto *m = client("pong");
        mosquitto_message_callback_set(m, on_message_ping);
        char *buf = calloc(1, A.size ? A.size : 1);
        double give_up = bench_now() + 60;
        /* The pong side may still be subscribing: the first pings go unanswered. */
        while (trips < A.samples + BENCH_WARMUP && bench_now() < give_up) {
            done = 0;
            t_sent = bench_now();
            mosquitto_publish(m, NULL, "ping", (int)A.size, buf, A.qos, false);
            double resend = t_sent + 0.2;
            while (!done && bench_now() < resend) turn(m, 10);
        }
        bench_print_latency(rtt, trips > BENCH_WARMUP ? trips - BENCH_WARMUP : 0, A.size);
        bench_exit(0);
    } else {
        struct mosquitto *m = client("ping");
        mosquitto_message_callback_set(m, on_message_pong);
        printf("subscribed\n");
        double give_up = bench_now() + A.max_seconds;
        while (bench_now() < give_up) {
            if (turn(m, 100) != MOSQ_ERR_SUCCESS) break;
        }
        bench_exit(0);
    }
}
