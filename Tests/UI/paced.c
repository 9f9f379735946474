// Test helper for Tests/UI/run: makes alsa-lib's `null` and `file` devices keep real time, as a
// sound card does (they accept audio as fast as it comes). Preloaded into bellkeys, it lets each
// snd_pcm_writei return only when the frames written so far are due at 48 kHz, counting from
// the first write, and no more than 4 periods ahead.
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <dlfcn.h>
#include <time.h>

static snd_pcm_sframes_t (*real_writei)(snd_pcm_t *, const void *, snd_pcm_uframes_t);
static struct timespec start;
static long long written;

snd_pcm_sframes_t snd_pcm_writei(snd_pcm_t *pcm, const void *buffer, snd_pcm_uframes_t size) {
    if (!real_writei) real_writei = (snd_pcm_sframes_t (*)(snd_pcm_t *, const void *, snd_pcm_uframes_t))dlsym(RTLD_NEXT, "snd_pcm_writei");
    if (written == 0) clock_gettime(CLOCK_MONOTONIC, &start);
    snd_pcm_sframes_t n = real_writei(pcm, buffer, size);
    if (n > 0) {
        written += n;
        // Due time of the frame that leaves 4 periods of 64 frames in the "buffer".
        long long due = written - 256 > 0 ? written - 256 : 0;
        long long ns = due * 1000000000LL / 48000;
        struct timespec t = {start.tv_sec + (start.tv_nsec + ns) / 1000000000LL, (start.tv_nsec + ns) % 1000000000LL};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    }
    return n;
}
