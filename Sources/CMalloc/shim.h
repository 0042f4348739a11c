#ifndef STORYTELLER_CMALLOC_SHIM_H
#define STORYTELLER_CMALLOC_SHIM_H
/* glibc's allocator statistics and trimming, which the Glibc module does not
   export; used by the benchmarks to report live heap next to RSS. */
#include <malloc.h>
#endif
