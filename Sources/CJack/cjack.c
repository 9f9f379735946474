// libjack, loaded at run time: one table of function pointers filled by bk_jack_load, and a
// wrapper per function. See include/cjack.h.
#define _GNU_SOURCE
#include "cjack.h"
#include <dlfcn.h>
#include <stdio.h>

static struct {
    bk_jack_client *(*client_open)(const char *, int, int *, ...);
    int (*client_close)(bk_jack_client *);
    const char *(*get_client_name)(bk_jack_client *);
    int (*activate)(bk_jack_client *);
    int (*deactivate)(bk_jack_client *);
    bk_jack_nframes_t (*get_sample_rate)(bk_jack_client *);
    bk_jack_nframes_t (*get_buffer_size)(bk_jack_client *);
    int (*is_realtime)(bk_jack_client *);
    int (*client_real_time_priority)(bk_jack_client *);
    float (*cpu_load)(bk_jack_client *);
    int (*set_process_callback)(bk_jack_client *, bk_jack_process_callback, void *);
    int (*set_buffer_size_callback)(bk_jack_client *, bk_jack_buffer_size_callback, void *);
    int (*set_xrun_callback)(bk_jack_client *, bk_jack_xrun_callback, void *);
    void (*on_info_shutdown)(bk_jack_client *, bk_jack_info_shutdown_callback, void *);
    void (*on_shutdown)(bk_jack_client *, bk_jack_shutdown_callback, void *);
    int (*set_port_registration_callback)(bk_jack_client *, bk_jack_port_registration_callback, void *);
    int (*set_port_connect_callback)(bk_jack_client *, bk_jack_port_connect_callback, void *);
    bk_jack_port *(*port_register)(bk_jack_client *, const char *, const char *, unsigned long, unsigned long);
    const char *(*port_name)(const bk_jack_port *);
    bk_jack_port *(*port_by_id)(bk_jack_client *, bk_jack_port_id_t);
    const char **(*port_get_connections)(const bk_jack_port *);
    const char **(*get_ports)(bk_jack_client *, const char *, const char *, unsigned long);
    int (*connect)(bk_jack_client *, const char *, const char *);
    void (*free)(void *);
    void *(*port_get_buffer)(bk_jack_port *, bk_jack_nframes_t);
    uint32_t (*midi_get_event_count)(void *);
    int (*midi_event_get)(bk_jack_midi_event *, void *, uint32_t);
    bk_jack_nframes_t (*last_frame_time)(const bk_jack_client *);
    bk_jack_time_t (*get_time)(void);
    int (*get_cycle_times)(const bk_jack_client *, bk_jack_nframes_t *, bk_jack_time_t *, bk_jack_time_t *, float *);
    void (*set_error_function)(void (*)(const char *));
    void (*set_info_function)(void (*)(const char *));
} jack;

static void quiet(const char *message) { (void)message; }
static int is_pipewire;

int bk_jack_is_pipewire(void) { return is_pipewire; }

int bk_jack_load(char *error, size_t error_size) {
    if (jack.client_open) return 0;
    void *library = dlopen("libjack.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(error, error_size, "%s", dlerror());
        return -1;
    }
#define LOAD(field, symbol)                                                                   \
    do {                                                                                      \
        *(void **)(&jack.field) = dlsym(library, symbol);                                    \
        if (!jack.field) {                                                                    \
            snprintf(error, error_size, "libjack.so.0 has no %s (too old a JACK)", symbol);  \
            jack.client_open = NULL;                                                          \
            return -1;                                                                        \
        }                                                                                     \
    } while (0)
    LOAD(get_client_name, "jack_get_client_name");
    LOAD(client_close, "jack_client_close");
    LOAD(activate, "jack_activate");
    LOAD(deactivate, "jack_deactivate");
    LOAD(get_sample_rate, "jack_get_sample_rate");
    LOAD(get_buffer_size, "jack_get_buffer_size");
    LOAD(is_realtime, "jack_is_realtime");
    LOAD(client_real_time_priority, "jack_client_real_time_priority");
    LOAD(cpu_load, "jack_cpu_load");
    LOAD(set_process_callback, "jack_set_process_callback");
    LOAD(set_buffer_size_callback, "jack_set_buffer_size_callback");
    LOAD(set_xrun_callback, "jack_set_xrun_callback");
    LOAD(on_info_shutdown, "jack_on_info_shutdown");
    LOAD(on_shutdown, "jack_on_shutdown");
    LOAD(set_port_registration_callback, "jack_set_port_registration_callback");
    LOAD(set_port_connect_callback, "jack_set_port_connect_callback");
    LOAD(port_register, "jack_port_register");
    LOAD(port_name, "jack_port_name");
    LOAD(port_by_id, "jack_port_by_id");
    LOAD(port_get_connections, "jack_port_get_connections");
    LOAD(get_ports, "jack_get_ports");
    LOAD(connect, "jack_connect");
    LOAD(free, "jack_free");
    LOAD(port_get_buffer, "jack_port_get_buffer");
    LOAD(midi_get_event_count, "jack_midi_get_event_count");
    LOAD(midi_event_get, "jack_midi_event_get");
    LOAD(last_frame_time, "jack_last_frame_time");
    LOAD(get_time, "jack_get_time");
    LOAD(get_cycle_times, "jack_get_cycle_times");
    LOAD(set_error_function, "jack_set_error_function");
    LOAD(set_info_function, "jack_set_info_function");
    LOAD(client_open, "jack_client_open");  // last: its presence means the table is complete
#undef LOAD
    is_pipewire = dlsym(library, "pw_init") != NULL;
    jack.set_error_function(quiet);
    jack.set_info_function(quiet);
    return 0;
}

bk_jack_client *bk_jack_client_open(const char *name, int options, int *status) {
    return jack.client_open(name, options, status);
}
int bk_jack_client_close(bk_jack_client *c) { return jack.client_close(c); }
const char *bk_jack_get_client_name(bk_jack_client *c) { return jack.get_client_name(c); }
int bk_jack_activate(bk_jack_client *c) { return jack.activate(c); }
int bk_jack_deactivate(bk_jack_client *c) { return jack.deactivate(c); }
bk_jack_nframes_t bk_jack_get_sample_rate(bk_jack_client *c) { return jack.get_sample_rate(c); }
bk_jack_nframes_t bk_jack_get_buffer_size(bk_jack_client *c) { return jack.get_buffer_size(c); }
int bk_jack_is_realtime(bk_jack_client *c) { return jack.is_realtime(c); }
int bk_jack_client_real_time_priority(bk_jack_client *c) { return jack.client_real_time_priority(c); }
float bk_jack_cpu_load(bk_jack_client *c) { return jack.cpu_load(c); }
int bk_jack_set_process_callback(bk_jack_client *c, bk_jack_process_callback f, void *x) {
    return jack.set_process_callback(c, f, x);
}
int bk_jack_set_buffer_size_callback(bk_jack_client *c, bk_jack_buffer_size_callback f, void *x) {
    return jack.set_buffer_size_callback(c, f, x);
}
int bk_jack_set_xrun_callback(bk_jack_client *c, bk_jack_xrun_callback f, void *x) { return jack.set_xrun_callback(c, f, x); }
void bk_jack_on_info_shutdown(bk_jack_client *c, bk_jack_info_shutdown_callback f, void *x) { jack.on_info_shutdown(c, f, x); }
void bk_jack_on_shutdown(bk_jack_client *c, bk_jack_shutdown_callback f, void *x) { jack.on_shutdown(c, f, x); }
int bk_jack_set_port_registration_callback(bk_jack_client *c, bk_jack_port_registration_callback f, void *x) {
    return jack.set_port_registration_callback(c, f, x);
}
int bk_jack_set_port_connect_callback(bk_jack_client *c, bk_jack_port_connect_callback f, void *x) {
    return jack.set_port_connect_callback(c, f, x);
}
bk_jack_port *bk_jack_port_register(bk_jack_client *c, const char *name, const char *type, unsigned long flags,
                                    unsigned long size) {
    return jack.port_register(c, name, type, flags, size);
}
const char *bk_jack_port_name(const bk_jack_port *p) { return jack.port_name(p); }
bk_jack_port *bk_jack_port_by_id(bk_jack_client *c, bk_jack_port_id_t id) { return jack.port_by_id(c, id); }
const char **bk_jack_port_get_connections(const bk_jack_port *p) { return jack.port_get_connections(p); }
const char **bk_jack_get_ports(bk_jack_client *c, const char *name, const char *type, unsigned long flags) {
    return jack.get_ports(c, name, type, flags);
}
int bk_jack_connect(bk_jack_client *c, const char *source, const char *destination) {
    return jack.connect(c, source, destination);
}
void bk_jack_free(void *pointer) { jack.free(pointer); }
void *bk_jack_port_get_buffer(bk_jack_port *p, bk_jack_nframes_t n) { return jack.port_get_buffer(p, n); }
uint32_t bk_jack_midi_get_event_count(void *b) { return jack.midi_get_event_count(b); }
int bk_jack_midi_event_get(bk_jack_midi_event *e, void *b, uint32_t i) { return jack.midi_event_get(e, b, i); }
bk_jack_nframes_t bk_jack_last_frame_time(const bk_jack_client *c) { return jack.last_frame_time(c); }
bk_jack_time_t bk_jack_get_time(void) { return jack.get_time(); }
int bk_jack_get_cycle_times(const bk_jack_client *c, bk_jack_nframes_t *f, bk_jack_time_t *u, bk_jack_time_t *n, float *p) {
    return jack.get_cycle_times(c, f, u, n, p);
}
