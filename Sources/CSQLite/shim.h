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

/// Turns SQLite's memory statistics off (`SQLITE_CONFIG_MEMSTATUS`, a variadic call Swift cannot make). With
/// them on, every allocation and free of every connection in the process takes one mutex
/// (`SQLITE_MUTEX_STATIC_MEM`). SQLITE_MISUSE, changing nothing, once the library is initialized.
static inline int coexist_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// Sets the size past which a statement journal leaves memory for a temporary file
/// (`SQLITE_CONFIG_STMTJRNL_SPILL`, variadic too). SQLITE_MISUSE, changing nothing, once the library is
/// initialized.
static inline int coexist_sqlite_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}

#endif
