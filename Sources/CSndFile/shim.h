#ifndef BELLKEYS_CSNDFILE_SHIM_H
#define BELLKEYS_CSNDFILE_SHIM_H
#include <sndfile.h>
#include <stdio.h>
#include <string.h>

/* MP3's format words, as libsndfile 1.1.0's header numbers them (SF_FORMAT_MPEG,
 * SF_FORMAT_MPEG_LAYER_III): an older header (Ubuntu 22.04's 1.0.31) lacks the names, and
 * bellkeys asks the library at run time whether it writes MP3 at all. */
#define BELLKEYS_SF_FORMAT_MPEG 0x230000
#define BELLKEYS_SF_FORMAT_MPEG_LAYER_III 0x0082

/* The first loop of a file's instrument chunk (SF_INSTRUMENT's loops are an array of an
 * anonymous struct, which Swift does not import): its mode, first frame and end as libsndfile
 * gives them. Returns 0 when the instrument has no loop. */
static inline int bellkeys_first_loop(const SF_INSTRUMENT *instrument, int *mode, unsigned *start, unsigned *end) {
    if (instrument->loop_count < 1) return 0;
    *mode = instrument->loops[0].mode;
    *start = instrument->loops[0].start;
    *end = instrument->loops[0].end;
    return 1;
}
/* Bytes in memory read as a sound file (an SF3 font's Ogg Vorbis sample), through libsndfile's
 * virtual I/O: bellkeys_open_memory opens them, read-only; `memory` must outlive the SNDFILE. */
typedef struct {
    const unsigned char *data;
    sf_count_t length;
    sf_count_t position;
} bellkeys_memory;

static sf_count_t bellkeys_memory_length(void *user) { return ((bellkeys_memory *)user)->length; }

static sf_count_t bellkeys_memory_seek(sf_count_t offset, int whence, void *user) {
    bellkeys_memory *memory = user;
    sf_count_t base = whence == SEEK_CUR ? memory->position : (whence == SEEK_END ? memory->length : 0);
    sf_count_t target = base + offset;
    if (target < 0 || target > memory->length) return -1;
    memory->position = target;
    return target;
}

static sf_count_t bellkeys_memory_read(void *destination, sf_count_t count, void *user) {
    bellkeys_memory *memory = user;
    sf_count_t left = memory->length - memory->position;
    if (count > left) count = left;
    if (count <= 0) return 0;
    memcpy(destination, memory->data + memory->position, (size_t)count);
    memory->position += count;
    return count;
}

static sf_count_t bellkeys_memory_write(const void *source, sf_count_t count, void *user) {
    (void)source; (void)count; (void)user;
    return 0;
}

static sf_count_t bellkeys_memory_tell(void *user) { return ((bellkeys_memory *)user)->position; }

static inline SNDFILE *bellkeys_open_memory(bellkeys_memory *memory, SF_INFO *info) {
    static SF_VIRTUAL_IO io = {
        bellkeys_memory_length, bellkeys_memory_seek, bellkeys_memory_read, bellkeys_memory_write,
        bellkeys_memory_tell};
    return sf_open_virtual(&io, SFM_READ, info, memory);
}
#endif
