#ifndef BELLKEYS_CALSA_SHIM_H
#define BELLKEYS_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#include <poll.h>

// Macros and inline accessors that Swift cannot import, re-exposed as functions.

static inline unsigned char bellkeys_seq_event_type(const snd_seq_event_t *ev) { return ev->type; }
static inline snd_seq_addr_t bellkeys_seq_event_source(const snd_seq_event_t *ev) { return ev->source; }
static inline snd_seq_ev_note_t bellkeys_seq_event_note(const snd_seq_event_t *ev) { return ev->data.note; }
static inline snd_seq_ev_ctrl_t bellkeys_seq_event_control(const snd_seq_event_t *ev) { return ev->data.control; }
static inline snd_seq_addr_t bellkeys_seq_event_address(const snd_seq_event_t *ev) { return ev->data.addr; }
static inline snd_seq_connect_t bellkeys_seq_event_connect(const snd_seq_event_t *ev) { return ev->data.connect; }

// The delivery stamp in nanoseconds of queue time, or -1 when the event carries no real-time
// stamp of queue `queue` (port timestamping stamps every event delivered to the port).
static inline long long bellkeys_seq_event_real_time(const snd_seq_event_t *ev, int queue) {
    if ((ev->flags & SND_SEQ_TIME_STAMP_MASK) != SND_SEQ_TIME_STAMP_REAL || ev->queue != queue) return -1;
    return (long long)ev->time.time.tv_sec * 1000000000LL + ev->time.time.tv_nsec;
}

static inline int bellkeys_seq_type_is_port_announce(unsigned char type) {
    return type >= SND_SEQ_EVENT_CLIENT_START && type <= SND_SEQ_EVENT_PORT_UNSUBSCRIBED;
}

// alsa-lib prints its own messages to stderr ("ALSA lib pcm.c:...") before returning an error
// code; bellkeys reports every error itself, in words, so those are silenced.
static void bellkeys_alsa_ignore(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline void bellkeys_alsa_silence(void) { snd_lib_error_set_handler(bellkeys_alsa_ignore); }
#endif
