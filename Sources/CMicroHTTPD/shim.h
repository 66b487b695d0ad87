#ifndef HERALD_CMICROHTTPD_SHIM_H
#define HERALD_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// MHD_start_daemon is variadic, which Swift cannot call: pass every option through one
/// MHD_OPTION_ARRAY (terminated by an MHD_OPTION_END item) instead.
static inline struct MHD_Daemon *herald_MHD_start_daemon(unsigned int flags, uint16_t port,
                                                         MHD_AcceptPolicyCallback apc, void *apc_cls,
                                                         MHD_AccessHandlerCallback dh, void *dh_cls,
                                                         struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, apc, apc_cls, dh, dh_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// An option item carrying one integer value (limits, timeouts, pool size).
static inline struct MHD_OptionItem herald_MHD_option_value(enum MHD_OPTION option, intptr_t value) {
    struct MHD_OptionItem item = { option, value, NULL };
    return item;
}

/// An option item carrying one pointer (MHD_OPTION_SOCK_ADDR).
static inline struct MHD_OptionItem herald_MHD_option_pointer(enum MHD_OPTION option, void *pointer) {
    struct MHD_OptionItem item = { option, 0, pointer };
    return item;
}

/// Two-pointer options put the function pointer in the integer slot (see MHD_OPTION_ARRAY);
/// the casts are done here because Swift cannot turn a C function pointer into an intptr_t.
static inline struct MHD_OptionItem herald_MHD_option_notify_completed(MHD_RequestCompletedCallback callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, cls };
    return item;
}

typedef void *(*herald_MHD_URILogCallback)(void *cls, const char *uri, struct MHD_Connection *connection);

static inline struct MHD_OptionItem herald_MHD_option_uri_log(herald_MHD_URILogCallback callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)callback, cls };
    return item;
}

/// Ends libmicrohttpd's copy of the query right after its '?', so MHD parses no query arguments.
///
/// Why: MHD 0.9.75 (Debian's libmicrohttpd12; src/microhttpd/connection.c,
/// parse_initial_message_line) parses every argument of the query into a record of the
/// connection's memory pool. About 1 000 short arguments, well inside Herald's target limit,
/// exhaust the pool: connection_add_header then queues a 431 but the parse goes on, and the
/// connection is left without an answer until it times out. Herald never reads MHD's parsed
/// arguments (it copies the raw target in the URI log callback and parses the query itself,
/// HTTPRequest.queryItems), so MHD is given an empty query instead.
///
/// Why this is safe: MHD calls the URI log callback with `uri` pointing into its own writable
/// read buffer ("log callback before we modify URI *or* args"), after it has found the first
/// '?' of the target (memchr) and before it writes a NUL there and parses what follows. The
/// callback's `const` is MHD's promise to itself, not read-only memory. Writing the NUL one byte
/// past that '?' leaves the '?' where MHD found it, so MHD's own NUL still ends the path, and
/// the argument string it parses is empty. The target ends at a NUL MHD wrote (over the space
/// before the HTTP version, or the line end), so '?'+1 is within the buffer. The caller must
/// have copied the target first. A '?' after a raw NUL in the target is not reached; such a
/// target is refused 400 by the dispatcher, but MHD still parses its arguments first.
///
/// On an MHD upgrade, re-check in parse_initial_message_line that the URI log callback still
/// runs after the '?' is located and before the arguments are parsed, on the same buffer; that
/// `connection->url` still comes from that buffer; and that nothing Herald calls reads GET
/// arguments (MHD_lookup_connection_value / MHD_get_connection_values with
/// MHD_GET_ARGUMENT_KIND). tests: ServerQueryArgumentTests.
static inline void herald_MHD_skip_query_arguments(const char *uri) {
    if (uri == NULL) return;
    char *question = strchr((char *)uri, '?');
    if (question != NULL && question[1] != '\0') question[1] = '\0';
}

static inline struct MHD_OptionItem herald_MHD_option_external_logger(MHD_LogCallback callback, void *cls) {
    struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)callback, cls };
    return item;
}

/// Leaves the URI exactly as received: by default MHD percent-decodes the path (turning
/// "%2F" into "/") before the application sees it; Herald decodes per segment itself.
static size_t herald_MHD_keep_escaped(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls; (void)connection;
    return strlen(s);
}

static inline struct MHD_OptionItem herald_MHD_option_keep_uri_escaped(void) {
    struct MHD_OptionItem item = { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)&herald_MHD_keep_escaped, NULL };
    return item;
}

/// MHD_get_daemon_info is variadic: the port actually bound (useful after binding port 0).
static inline uint16_t herald_MHD_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// MHD_get_connection_info is variadic: the peer's socket address, or NULL.
static inline const struct sockaddr *herald_MHD_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}
/// MHD_get_connection_info is variadic: the size in bytes of the request head as received
/// (request line, header fields, the blank line), or 0 when MHD does not know it yet.
static inline size_t herald_MHD_request_head_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}
#endif
