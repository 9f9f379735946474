#ifndef BELLKEYS_CJACK_H
#define BELLKEYS_CJACK_H
// The part of the JACK API bellkeys uses, with libjack loaded at run time (dlopen), so that
// bellkeys needs no JACK at build time and still starts on a machine without libjack (a
// Raspberry Pi playing through ALSA). Every function is JACK's own of the same name after
// `bk_`; see <jack/jack.h> and <jack/midiport.h> for what each does. Types are declared here
// with the same layout as JACK's public headers (which are ABI-stable).
#include <stddef.h>
#include <stdint.h>

typedef uint32_t bk_jack_nframes_t;
typedef uint64_t bk_jack_time_t;
typedef uint32_t bk_jack_port_id_t;
typedef struct bk_jack_client bk_jack_client;   // jack_client_t
typedef struct bk_jack_port bk_jack_port;       // jack_port_t

// jack_midi_event_t
typedef struct {
    bk_jack_nframes_t time;
    size_t size;
    unsigned char *buffer;
} bk_jack_midi_event;

enum {
    BK_JACK_NO_START_SERVER = 0x01,   // JackNoStartServer
    BK_JACK_USE_EXACT_NAME = 0x02,    // JackUseExactName
    BK_JACK_PORT_IS_INPUT = 0x1,      // JackPortIsInput
    BK_JACK_PORT_IS_OUTPUT = 0x2,     // JackPortIsOutput
    BK_JACK_PORT_IS_PHYSICAL = 0x4,   // JackPortIsPhysical
    BK_JACK_PORT_IS_TERMINAL = 0x10,  // JackPortIsTerminal
    BK_JACK_SERVER_FAILED = 0x10,     // JackServerFailed
    BK_JACK_CLIENT_ZOMBIE = 0x1000,   // JackClientZombie
    BK_JACK_NAME_NOT_UNIQUE = 0x04,   // JackNameNotUnique
    BK_JACK_VERSION_ERROR = 0x400,    // JackVersionError
};
#define BK_JACK_AUDIO_TYPE "32 bit float mono audio"
#define BK_JACK_MIDI_TYPE "8 bit raw midi"

typedef int (*bk_jack_process_callback)(bk_jack_nframes_t frames, void *context);
typedef int (*bk_jack_buffer_size_callback)(bk_jack_nframes_t frames, void *context);
typedef int (*bk_jack_xrun_callback)(void *context);
typedef void (*bk_jack_info_shutdown_callback)(int status, const char *reason, void *context);
typedef void (*bk_jack_shutdown_callback)(void *context);
typedef void (*bk_jack_port_registration_callback)(bk_jack_port_id_t port, int registered, void *context);
typedef void (*bk_jack_port_connect_callback)(bk_jack_port_id_t a, bk_jack_port_id_t b, int connected, void *context);

/// Loads libjack (`libjack.so.0`, as found by the dynamic linker: jackd2's, or PipeWire's under
/// `pw-jack`). Returns 0, or -1 with dlerror()'s words in `error`. Also silences libjack's own
/// messages (it prints to stderr when no server runs); bellkeys reports errors itself.
int bk_jack_load(char *error, size_t error_size);

/// Whether the libjack loaded is PipeWire's (it brings libpipewire: `pw_init` resolves through
/// it), wherever the distribution installs it. 0 before bk_jack_load succeeded.
int bk_jack_is_pipewire(void);

bk_jack_client *bk_jack_client_open(const char *name, int options, int *status);
int bk_jack_client_close(bk_jack_client *client);
const char *bk_jack_get_client_name(bk_jack_client *client);
int bk_jack_activate(bk_jack_client *client);
int bk_jack_deactivate(bk_jack_client *client);
bk_jack_nframes_t bk_jack_get_sample_rate(bk_jack_client *client);
bk_jack_nframes_t bk_jack_get_buffer_size(bk_jack_client *client);
int bk_jack_is_realtime(bk_jack_client *client);
int bk_jack_client_real_time_priority(bk_jack_client *client);
float bk_jack_cpu_load(bk_jack_client *client);

int bk_jack_set_process_callback(bk_jack_client *client, bk_jack_process_callback callback, void *context);
int bk_jack_set_buffer_size_callback(bk_jack_client *client, bk_jack_buffer_size_callback callback, void *context);
int bk_jack_set_xrun_callback(bk_jack_client *client, bk_jack_xrun_callback callback, void *context);
void bk_jack_on_info_shutdown(bk_jack_client *client, bk_jack_info_shutdown_callback callback, void *context);
void bk_jack_on_shutdown(bk_jack_client *client, bk_jack_shutdown_callback callback, void *context);
int bk_jack_set_port_registration_callback(bk_jack_client *client, bk_jack_port_registration_callback callback, void *context);
int bk_jack_set_port_connect_callback(bk_jack_client *client, bk_jack_port_connect_callback callback, void *context);

bk_jack_port *bk_jack_port_register(bk_jack_client *client, const char *name, const char *type, unsigned long flags,
                                    unsigned long buffer_size);
const char *bk_jack_port_name(const bk_jack_port *port);
bk_jack_port *bk_jack_port_by_id(bk_jack_client *client, bk_jack_port_id_t id);
const char **bk_jack_port_get_connections(const bk_jack_port *port);
const char **bk_jack_get_ports(bk_jack_client *client, const char *name_pattern, const char *type_pattern,
                               unsigned long flags);
int bk_jack_connect(bk_jack_client *client, const char *source, const char *destination);
void bk_jack_free(void *pointer);

// Real-time safe (JACK's process-callback API).
void *bk_jack_port_get_buffer(bk_jack_port *port, bk_jack_nframes_t frames);
uint32_t bk_jack_midi_get_event_count(void *port_buffer);
int bk_jack_midi_event_get(bk_jack_midi_event *event, void *port_buffer, uint32_t index);
bk_jack_nframes_t bk_jack_last_frame_time(const bk_jack_client *client);
bk_jack_time_t bk_jack_get_time(void);
int bk_jack_get_cycle_times(const bk_jack_client *client, bk_jack_nframes_t *current_frames,
                            bk_jack_time_t *current_usecs, bk_jack_time_t *next_usecs, float *period_usecs);
#endif
