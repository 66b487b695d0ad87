#ifndef HERALD_CMICROHTTPD_SHIM_H
#define HERALD_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
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
#endif
