#ifndef COEXIST_CSQLITE_SHIM_H
#define COEXIST_CSQLITE_SHIM_H

// Debian's libsqlite3 is built with these; the header declares their APIs only when asked.
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro that Swift cannot import: SQLite copies the bound bytes.
static inline sqlite3_destructor_type coexist_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// `sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes)` (a variadic call Swift cannot make): statement
/// journals stay in memory up to `bytes`, then spill to a temporary file. Only before the library is
/// initialized (the first connection opened); SQLITE_MISUSE after.
static inline int coexist_sqlite_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}

#endif
