#ifndef STORYTELLER_CSQLITE_SHIM_H
#define STORYTELLER_CSQLITE_SHIM_H

#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot
   import: these wrappers bind a copy of the caller's bytes. Prefixed names never
   collide with SQLite's own. */

static inline int st_sqlite3_bind_blob_copy(sqlite3_stmt *statement, int index, const void *bytes, int count) {
    return sqlite3_bind_blob(statement, index, bytes, count, SQLITE_TRANSIENT);
}

static inline int st_sqlite3_bind_text_copy(sqlite3_stmt *statement, int index, const char *text, int count) {
    return sqlite3_bind_text(statement, index, text, count, SQLITE_TRANSIENT);
}

#endif
