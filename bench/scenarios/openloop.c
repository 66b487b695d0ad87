/*
 * openloop: a constant-rate (open-loop) HTTP/1.1 load generator for the Herald benchmark.
 *
 * wrk is closed-loop: a connection sends its next request only when the previous answer has
 * arrived, so a server stall also stalls the load and the stalled time is never counted
 * ("coordinated omission"). wrk2 fixes that but is not in Debian. This program schedules
 * request i at the intended time t0 + i / rate, whatever the server does, and measures every
 * latency from that intended time, not from when the request could actually be written.
 *
 * Design: one thread, epoll, N keep-alive connections opened before the schedule starts.
 * epoll_pwait2 (a nanosecond timeout, 1 µs timer slack) wakes the loop at the next intended
 * time; every due request goes out on an idle connection. When all N are busy, due requests
 * wait in order (nothing is dropped or re-timed) and their wait counts in their latency; the
 * lag between intended and actual send is reported (`lagP99`, `lagMax`, `lateSends` > 1 ms), and
 * `queued` counts the requests that waited for a free connection (the rest of any lag is the
 * generator itself being late, e.g. descheduled).
 * Requests come pre-formatted: one per line of --bodies (POSTed once each, as bodies.lua
 * does; identity and refresh tokens are single-use), or a fixed GET. Answers are parsed for
 * the status and Content-Length or chunked framing; a non-2xx status is counted.
 *
 * Output: one line `BENCH {json}` (the fields of bodies.lua's summary plus open-loop ones):
 * latencies in ms from the intended send time (p50/p90/p99/p999/max), service time from the
 * actual send (serviceP50/serviceP99), the send lag, the generator's own CPU seconds, and
 * `achieved` (answers within the schedule's window per second: the rate it reached).
 *
 * Usage: openloop --port P --rate R --duration S [--connections 64] [--host 127.0.0.1]
 *                 (--get PATH | --bodies FILE --path PATH --content-type TYPE)
 *                 [--drain 10]   seconds to wait for outstanding answers after the schedule
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char *data;
    size_t length;
} request_t;

typedef struct {
    int fd;
    int busy;            /* a request is in flight */
    int connected;
    int listed;          /* its index is on the idle stack */
    int watching_out;    /* epoll also waits for writability (a partial write) */
    int64_t intended;    /* ns: when the in-flight request was meant to go out */
    int64_t sent;        /* ns: when it went out */
    const request_t *request;
    size_t written;
    char *buffer;        /* the answer so far */
    size_t used, capacity;
} connection_t;

static const char *host = "127.0.0.1";
static int port = 0;
static double rate = 0, duration = 0, drain_seconds = 10;
static int connection_count = 64;

static request_t *requests;
static size_t request_count;
static int single_request; /* --get: every request is requests[0] */

static int64_t *latencies, *services, *lags;
static size_t completed, completed_in_window, non2xx, socket_errors, late_sends, unsent, reconnects, queued;
static int backlogged; /* due requests found every connection busy and wait */

static int epoll_fd;
static connection_t *connections;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

static char *read_file(const char *path, size_t *length) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc((size_t)size + 1);
    if (fread(data, 1, (size_t)size, f) != (size_t)size) die("read");
    fclose(f);
    data[size] = 0;
    *length = (size_t)size;
    return data;
}

static request_t format_request(const char *method, const char *path, const char *type, const char *body,
                                size_t body_length) {
    request_t r;
    size_t capacity = strlen(path) + (type ? strlen(type) : 0) + body_length + 256;
    r.data = malloc(capacity);
    int head;
    if (body)
        head = snprintf(r.data, capacity, "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                        method, path, host, port, type, body_length);
    else
        head = snprintf(r.data, capacity, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", method, path, host, port);
    if (body) memcpy(r.data + head, body, body_length);
    r.length = (size_t)head + (body ? body_length : 0);
    return r;
}

static void load_bodies(const char *file, const char *path, const char *type) {
    size_t length;
    char *text = read_file(file, &length);
    size_t capacity = 1024;
    requests = malloc(capacity * sizeof *requests);
    char *line = text;
    while (line < text + length) {
        char *end = memchr(line, '\n', (size_t)(text + length - line));
        if (!end) end = text + length;
        if (end > line) {
            if (request_count == capacity) requests = realloc(requests, (capacity *= 2) * sizeof *requests);
            requests[request_count++] = format_request("POST", path, type, line, (size_t)(end - line));
        }
        line = end + 1;
    }
    free(text);
}

static void watch(connection_t *c, uint32_t events, int op) {
    struct epoll_event e = {.events = events, .data.ptr = c};
    if (epoll_ctl(epoll_fd, op, c->fd, &e) != 0) die("epoll_ctl");
}

static void open_connection(connection_t *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, host, &address.sin_addr);
    if (connect(c->fd, (struct sockaddr *)&address, sizeof address) != 0 && errno != EINPROGRESS) die("connect");
    c->connected = 0;
    c->busy = 0;
    c->used = 0;
    c->watching_out = 0;
    watch(c, EPOLLOUT | EPOLLIN, EPOLL_CTL_ADD);
}

static void reopen(connection_t *c) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    reconnects++;
    open_connection(c);
}

/* Idle connections, as a stack of indices; an entry whose connection is reconnecting is skipped. */
static int *idle;
static int idle_count;

static void make_idle(connection_t *c) {
    if (!c->listed) {
        c->listed = 1;
        idle[idle_count++] = (int)(c - connections);
    }
}

static connection_t *take_idle(void) {
    while (idle_count > 0) {
        connection_t *c = &connections[idle[--idle_count]];
        c->listed = 0;
        if (c->connected && !c->busy) return c;
    }
    return NULL;
}

static void write_more(connection_t *c) {
    while (c->written < c->request->length) {
        ssize_t n = write(c->fd, c->request->data + c->written, c->request->length - c->written);
        if (n < 0) {
            if (errno == EAGAIN) {
                if (!c->watching_out) watch(c, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
                c->watching_out = 1;
                return;
            }
            socket_errors++;
            c->busy = 0;
            reopen(c);
            return;
        }
        c->written += (size_t)n;
    }
    if (c->watching_out) watch(c, EPOLLIN, EPOLL_CTL_MOD); /* a syscall only after a partial write */
    c->watching_out = 0;
}

static size_t next_index; /* the next request of the schedule to send */
static size_t planned;    /* how many the schedule has */
static int64_t t0, schedule_end;

static int64_t intended(size_t i) { return t0 + (int64_t)((double)i * 1e9 / rate); }

static void send_request(connection_t *c, size_t i, int64_t now) {
    c->busy = 1;
    c->intended = intended(i);
    c->sent = now;
    c->request = single_request ? &requests[0] : &requests[i];
    c->written = 0;
    c->used = 0;
    int64_t lag = now - c->intended;
    lags[i] = lag;
    if (lag > 1000000) late_sends++;
    write_more(c);
}

/* Parses c->buffer; returns 1 when a whole answer is there (and its status), 0 when more is needed. */
static int parse_answer(connection_t *c, int *status, int *close_after) {
    char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
    if (!end) return 0;
    size_t header_length = (size_t)(end - c->buffer) + 4;
    if (c->used < 12) return 0;
    *status = atoi(c->buffer + 9);
    *close_after = 0;
    long content_length = -1;
    int chunked = 0;
    for (char *line = memchr(c->buffer, '\n', header_length) + 1; line < end; line = memchr(line, '\n', (size_t)(end - line) + 2) + 1) {
        if (strncasecmp(line, "Content-Length:", 15) == 0) content_length = atol(line + 15);
        else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 && strcasestr(line, "chunked") && strcasestr(line, "chunked") < (char *)memchr(line, '\n', (size_t)(end - line) + 2)) chunked = 1;
        else if (strncasecmp(line, "Connection:", 11) == 0 && strncasecmp(line + 11 + strspn(line + 11, " "), "close", 5) == 0) *close_after = 1;
    }
    if (chunked) {
        size_t at = header_length;
        for (;;) {
            char *line_end = memmem(c->buffer + at, c->used - at, "\r\n", 2);
            if (!line_end) return 0;
            long size = strtol(c->buffer + at, NULL, 16);
            at = (size_t)(line_end - c->buffer) + 2;
            if (size == 0) {
                /* trailers end with an empty line */
                char *trailer_end = memmem(c->buffer + at, c->used - at, "\r\n", 2);
                if (!trailer_end) return 0;
                return 1;
            }
            if (c->used < at + (size_t)size + 2) return 0;
            at += (size_t)size + 2;
        }
    }
    if (content_length < 0) content_length = 0;
    return c->used >= header_length + (size_t)content_length;
}

static void readable(connection_t *c, int64_t now) {
    for (;;) {
        if (c->capacity - c->used < 4096) c->buffer = realloc(c->buffer, c->capacity = c->capacity * 2 + 8192);
        ssize_t n = read(c->fd, c->buffer + c->used, c->capacity - c->used);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            if (c->busy) socket_errors++;
            c->busy = 0;
            reopen(c);
            return;
        }
        if (n < 0) break;
        c->used += (size_t)n;
        if (c->used < c->capacity) break; /* drained: (level-triggered) epoll reports any more */
    }
    if (!c->busy) return;
    int status, close_after;
    if (!parse_answer(c, &status, &close_after)) return;
    latencies[completed] = now - c->intended;
    services[completed] = now - c->sent;
    completed++;
    if (now <= schedule_end) completed_in_window++;
    if (status < 200 || status > 299) non2xx++;
    c->busy = 0;
    c->used = 0;
    if (close_after) {
        reopen(c);
        return;
    }
    make_idle(c);
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double percentile_ms(int64_t *values, size_t count, double q) {
    if (count == 0) return 0;
    size_t i = (size_t)(q * (double)count);
    if (i >= count) i = count - 1;
    return (double)values[i] / 1e6;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    const char *bodies = NULL, *path = NULL, *type = "application/json", *get = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--host")) host = argv[i + 1];
        else if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--duration")) duration = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--drain")) drain_seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--connections")) connection_count = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bodies")) bodies = argv[i + 1];
        else if (!strcmp(argv[i], "--path")) path = argv[i + 1];
        else if (!strcmp(argv[i], "--content-type")) type = argv[i + 1];
        else if (!strcmp(argv[i], "--get")) get = argv[i + 1];
        else {
            fprintf(stderr, "openloop: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!port || rate <= 0 || duration <= 0 || connection_count < 1 || !(get || (bodies && path))) {
        fprintf(stderr, "usage: openloop --port P --rate R --duration S [--connections N] "
                        "(--get PATH | --bodies FILE --path PATH [--content-type T])\n");
        return 2;
    }
    prctl(PR_SET_TIMERSLACK, 1UL); /* timer wake-ups within 1 µs, not the default 50 µs */
    planned = (size_t)(rate * duration);
    if (get) {
        requests = malloc(sizeof *requests);
        requests[0] = format_request("GET", get, NULL, NULL, 0);
        request_count = 1;
        single_request = 1;
    } else {
        load_bodies(bodies, path, type);
    }
    size_t available = single_request ? planned : request_count;
    int exhausted = planned > available;
    if (exhausted) planned = available; /* never replay a single-use body: fewer requests, reported */
    latencies = malloc((planned + 1) * sizeof *latencies);
    services = malloc((planned + 1) * sizeof *services);
    lags = malloc((planned + 1) * sizeof *lags);

    epoll_fd = epoll_create1(0);
    connections = calloc((size_t)connection_count, sizeof *connections);
    idle = malloc((size_t)connection_count * sizeof *idle);
    for (int i = 0; i < connection_count; i++) open_connection(&connections[i]);

    /* Every connection established before the clock starts. */
    struct epoll_event events[256];
    int open_count = 0;
    int64_t connect_deadline = now_ns() + 10000000000LL;
    while (open_count < connection_count) {
        if (now_ns() > connect_deadline) {
            fprintf(stderr, "openloop: could not connect\n");
            return 2;
        }
        int n = epoll_wait(epoll_fd, events, 256, 100);
        for (int k = 0; k < n; k++) {
            connection_t *c = events[k].data.ptr;
            if (!c || c->connected) continue;
            int error = 0;
            socklen_t length = sizeof error;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &length);
            if (error) {
                fprintf(stderr, "openloop: connect: %s\n", strerror(error));
                return 2;
            }
            c->connected = 1;
            watch(c, EPOLLIN, EPOLL_CTL_MOD);
            make_idle(c);
            open_count++;
        }
    }

    double cpu_start = cpu_seconds();
    t0 = now_ns() + 1000000; /* 1 ms from now */
    schedule_end = t0 + (int64_t)(duration * 1e9);
    int64_t drain_end = schedule_end + (int64_t)(drain_seconds * 1e9);
    for (;;) {
        int64_t now = now_ns();
        for (;;) {
            if (next_index >= planned || intended(next_index) > now) {
                backlogged = 0; /* caught up */
                break;
            }
            connection_t *c = take_idle();
            if (!c) {
                backlogged = 1; /* every connection busy: due requests wait, their latency runs on */
                break;
            }
            if (backlogged) queued++;
            send_request(c, next_index++, now);
        }
        size_t in_flight = 0;
        for (int i = 0; i < connection_count; i++) in_flight += connections[i].busy;
        if (next_index >= planned && in_flight == 0) break;
        if (now > drain_end) break;
        /* Wake at the next intended time when a connection can take it; otherwise an answer
           (or 100 ms) wakes us. */
        int64_t wait = 100000000LL;
        if (next_index < planned && idle_count > 0) {
            int64_t until = intended(next_index) - now;
            wait = until < 0 ? 0 : until < wait ? until : wait;
        }
        struct timespec timeout = {.tv_sec = wait / 1000000000LL, .tv_nsec = wait % 1000000000LL};
        int n = epoll_pwait2(epoll_fd, events, 256, &timeout, NULL);
        if (n < 0 && errno != EINTR) die("epoll_pwait2");
        now = now_ns();
        for (int k = 0; k < n; k++) {
            connection_t *c = events[k].data.ptr;
            if (!c->connected) {
                int error = 0;
                socklen_t length = sizeof error;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &length);
                if (error) {
                    socket_errors++;
                    reopen(c);
                    continue;
                }
                c->connected = 1;
                watch(c, EPOLLIN, EPOLL_CTL_MOD);
                make_idle(c);
                continue;
            }
            if ((events[k].events & EPOLLOUT) && c->busy && c->written < c->request->length) write_more(c);
            if (events[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) readable(c, now);
        }
    }
    double cpu = cpu_seconds() - cpu_start;
    size_t outstanding = 0;
    for (int i = 0; i < connection_count; i++) outstanding += connections[i].busy;
    unsent = planned - next_index;

    size_t sent = next_index;
    int64_t lag_max = 0;
    for (size_t i = 0; i < sent; i++)
        if (lags[i] > lag_max) lag_max = lags[i];
    qsort(lags, sent, sizeof *lags, compare);
    qsort(latencies, completed, sizeof *latencies, compare);
    qsort(services, completed, sizeof *services, compare);
    printf("BENCH {\"requests\":%zu,\"seconds\":%.3f,\"non2xx\":%zu,\"socketErrors\":%zu,"
           "\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,"
           "\"serviceP50\":%.3f,\"serviceP99\":%.3f,\"offered\":%.1f,\"achieved\":%.1f,\"planned\":%zu,\"unsent\":%zu,"
           "\"outstanding\":%zu,\"queued\":%zu,\"lateSends\":%zu,\"lagP99\":%.3f,\"lagMax\":%.3f,"
           "\"reconnects\":%zu,\"generatorCpu\":%.4f,\"connections\":%d,"
           "\"bodiesUsed\":%zu,\"bodiesAvailable\":%zu,\"wrappedThreads\":%d}\n",
           completed, duration, non2xx, socket_errors + outstanding + unsent,
           percentile_ms(latencies, completed, 0.5), percentile_ms(latencies, completed, 0.9),
           percentile_ms(latencies, completed, 0.99), percentile_ms(latencies, completed, 0.999),
           completed ? (double)latencies[completed - 1] / 1e6 : 0.0,
           percentile_ms(services, completed, 0.5), percentile_ms(services, completed, 0.99), rate,
           (double)completed_in_window / duration, planned, unsent,
           outstanding, queued, late_sends, percentile_ms(lags, sent, 0.99), (double)lag_max / 1e6, reconnects, cpu,
           connection_count, single_request ? 0 : sent, single_request ? 0 : request_count, exhausted);
    return 0;
}
