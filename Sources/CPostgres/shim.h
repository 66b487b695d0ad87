#ifndef HERALD_CPOSTGRES_SHIM_H
#define HERALD_CPOSTGRES_SHIM_H
#include <libpq-fe.h>

/// PG_DIAG_* are character-literal macros; Swift imports them unreliably, so name them here.
static inline int herald_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int herald_pg_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
#endif
