/* Sends a query and prints the replies; waits for the end of the query on a condition variable. */
#include "common.h"

#if Z_FEATURE_MULTI_THREAD == 1
static z_owned_condvar_t cond;
static z_owned_mutex_t mutex;
static bool done = false;

static void reply_dropper(void *ctx) {
    (void)ctx;
    printf(">> Received query final notification\n");
    z_mutex_lock(z_loan_mut(mutex));
    done = true;
    z_condvar_signal(z_loan_mut(cond));
    z_mutex_unlock(z_loan_mut(mutex));
}

static void reply_handler(z_loaned_reply_t *reply, void *ctx) {
    (void)ctx;
    if (z_reply_is_ok(reply)) {
        const z_loaned_sample_t *sample = z_reply_ok(reply);
        z_view_string_t keystr;
        z_keyexpr_as_view_string(z_sample_keyexpr(sample), &keystr);
        z_owned_string_t replystr;
        z_bytes_to_string(z_sample_payload(sample), &replystr);
        printf(">> Received ('%.*s': '%.*s')\n", (int)z_string_len(z_loan(keystr)), z_string_data(z_loan(keystr)),
               (int)z_string_len(z_loan(replystr)), z_string_data(z_loan(replystr)));
        z_drop(z_move(replystr));
    } else {
        printf(">> Received an error\n");
    }
}

int main(int argc, char **argv) {
    example_args_t a = {"tcp/127.0.0.1:7447", "client", "demo/example/**", NULL, 0, 0};
    example_args(argc, argv, &a);
    z_mutex_init(&mutex);
    z_condvar_init(&cond);
    z_owned_session_t s;
    if (example_open(&s, &a) < 0) return -1;
    z_view_keyexpr_t ke;
    if (z_view_keyexpr_from_str(&ke, a.key) < 0) return -1;
    z_get_options_t opts;
    z_get_options_default(&opts);
    z_owned_bytes_t payload;
    if (a.value != NULL) {
        z_bytes_from_static_str(&payload, a.value);
        opts.payload = z_move(payload);
    }
    z_owned_closure_reply_t callback;
    z_closure(&callback, reply_handler, reply_dropper, NULL);
    printf("Sending Query '%s'...\n", a.key);
    z_mutex_lock(z_loan_mut(mutex));
    if (z_get(z_loan(s), z_loan(ke), "", z_move(callback), &opts) < 0) {
        printf("Unable to send query.\n");
        return -1;
    }
    while (!done) z_condvar_wait(z_loan_mut(cond), z_loan_mut(mutex));
    z_mutex_unlock(z_loan_mut(mutex));
    z_drop(z_move(s));
    z_drop(z_move(cond));
    z_drop(z_move(mutex));
    return 0;
}
#else
int main(void) {
    printf("z_get needs Z_FEATURE_MULTI_THREAD = 1\n");
    return -2;
}
#endif
