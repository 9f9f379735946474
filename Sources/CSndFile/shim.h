#ifndef BELLKEYS_CSNDFILE_SHIM_H
#define BELLKEYS_CSNDFILE_SHIM_H
#include <sndfile.h>

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
#endif
