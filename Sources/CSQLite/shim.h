#ifndef HERALD_CSQLITE_SHIM_H
#define HERALD_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro cast Swift cannot import: SQLite copies the bound value.
static inline sqlite3_destructor_type herald_sqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
