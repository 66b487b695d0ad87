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
