// Replaces glibc's allocation entry points in the test executable (an executable's symbols
// win over libc's), forwarding to glibc's internal ones. Counting is per thread, so tests
// that run in parallel do not disturb each other.
//
// Under a sanitizer (swift test --sanitize=thread), the sanitizer's runtime owns malloc, so
// the counter uses the runtime's allocation hook instead of replacing malloc.
#define _GNU_SOURCE
#include <stddef.h>
#include "AllocationCounter.h"

static __thread int counting;
static __thread long count;

void bellkeys_allocations_start(void) { count = 0; counting = 1; }
long bellkeys_allocations_stop(void) { counting = 0; return count; }

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#    define BELLKEYS_SANITIZED 1
#  endif
#endif

#ifdef BELLKEYS_SANITIZED
int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
                                              void (*)(const volatile void *));

static void allocated(const volatile void *p, size_t size) { (void)p; (void)size; if (counting) count++; }
static void freed(const volatile void *p) { (void)p; }

__attribute__((constructor)) static void install_hooks(void) {
    __sanitizer_install_malloc_and_free_hooks(allocated, freed);
}
#else
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

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
#endif
