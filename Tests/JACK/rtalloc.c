// Preloaded into bellkeys by Tests/JACK/check.py (test rt-allocations): counts heap allocations
// and frees made by real-time threads (SCHED_FIFO or SCHED_RR: JACK's process thread), and
// writes the count and the first few callers' names to the file RTALLOC_OUT when the process
// exits. Other threads are not counted (the control thread allocates freely).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_long count;
static void *callers[8];

static void note(void *caller) {
    int policy = sched_getscheduler(0);
    if (policy != SCHED_FIFO && policy != SCHED_RR) return;
    long n = atomic_fetch_add(&count, 1);
    if (n < 8) callers[n] = caller;
}

void *malloc(size_t size) { note(__builtin_return_address(0)); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(__builtin_return_address(0)); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { note(__builtin_return_address(0)); return __libc_realloc(p, size); }
void *memalign(size_t alignment, size_t size) { note(__builtin_return_address(0)); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }
void free(void *p) {
    if (p) note(__builtin_return_address(0));
    __libc_free(p);
}
int posix_memalign(void **out, size_t alignment, size_t size) {
    void *p = memalign(alignment, size);
    if (!p) return 12;
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("RTALLOC_OUT");
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    long n = atomic_load(&count);
    fprintf(f, "%ld", n);
    for (long i = 0; i < n && i < 8; i++) {
        Dl_info info;
        if (dladdr(callers[i], &info) && info.dli_sname) fprintf(f, " %s", info.dli_sname);
        else fprintf(f, " %p", callers[i]);
    }
    fprintf(f, "\n");
    fclose(f);
}
