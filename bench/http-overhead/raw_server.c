/*
 * The baseline for bench/http-overhead: the least a libmicrohttpd server can do per request.
 * Same daemon setup as Herald's HTTPServer (internal polling thread pool sized to the cores,
 * epoll, suspend/resume allowed, same limits), answering every request with the 2-byte body
 * "ok" straight from the MHD thread, with no routing, no suspension, no Swift.
 *
 * Usage: raw_server PORT   (binds 127.0.0.1; stops on SIGINT/SIGTERM)
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *ok_response;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
    static int seen; /* any non-NULL marker for *con_cls */
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    /* Answering on the first call (headers only) makes MHD 0.9.75 close the connection, as it
     * cannot know the body was read; answering once the request is complete keeps it alive. */
    if (*con_cls == NULL) {
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_data_size != 0) { /* ignore any body */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, ok_response);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s PORT\n", argv[0]);
        return 2;
    }
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)atoi(argv[1]));
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);

    ok_response = MHD_create_response_from_buffer(2, "ok", MHD_RESPMEM_PERSISTENT);

    /* Block the stop signals before MHD starts its threads, so only sigwait sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME,
        (uint16_t)atoi(argv[1]), NULL, NULL, answer, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(threads > 1 ? threads : 0),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1024,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)256,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "raw_server: cannot listen on 127.0.0.1:%s\n", argv[1]);
        return 1;
    }
    printf("raw_server listening on 127.0.0.1:%s with %ld threads\n", argv[1], threads);
    fflush(stdout);

    int signal_number;
    sigwait(&stop, &signal_number);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(ok_response);
    return 0;
}
