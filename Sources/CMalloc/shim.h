#ifndef STORYTELLER_CMALLOC_SHIM_H
#define STORYTELLER_CMALLOC_SHIM_H
/* glibc functions the Glibc module does not export: the allocator's
   statistics and trimming (the benchmarks report live heap next to RSS), and
   sync_file_range, a _GNU_SOURCE declaration (the blob store starts the
   writeback of large files as it writes them). */
#include <malloc.h>
#include <sys/types.h>

#define ST_SYNC_FILE_RANGE_WRITE 2
extern int sync_file_range(int fd, __off64_t offset, __off64_t count, unsigned int flags);
#endif
