// Replaces glibc's allocation entry points in the test executable (an executable's symbols
// win over libc's), forwarding to glibc's internal ones. Counting is per thread, so tests
// that run in parallel do not disturb each other.
#define _GNU_SOURCE
#include <stddef.h>
#include "AllocationCounter.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread long count;

void bellkeys_allocations_start(void) { count = 0; counting = 1; }
long bellkeys_allocations_stop(void) { counting = 0; return count; }

void *malloc(size_t size) { if (counting) count++; return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { if (counting) count++; return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { if (counting) count++; return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) {
    if (counting) count++;
    return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    void *p = memalign(alignment, size);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
