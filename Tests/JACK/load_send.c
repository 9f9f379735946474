// load_send: MIDI events at a steady average rate for Tests/JACK/load.
//
//   load_send --seconds S [--rate EVENTS_PER_SECOND] [--target PORT]... [--seed N]
//   load_send --twin VOICES [--busy-ns NS]
//
// One JACK client, load_send, with a MIDI output midi_out connected to each PORT (up to 4;
// none given: bellkeys:midi_in). From 0.5 s after that, for S seconds of frames, it writes
// events at pseudo-random frames (gaps uniform in 0..2 x mean, so some share a frame): 50 %
// note-ons, 38 % note-offs on notes 60..72 of channels 1 and 2, 8 % CC7, 4 % CC64 (down and up in
// turn). The same seed gives the same events at the same frames. Stderr gets "load_send: sending"
// when it starts. Every 0.1 s the main thread reads jack_cpu_load() (from 1 s on: it settles).
// At the end, one JSON line on stdout. Exit status: 0 done; 1 an event could not be written or the
// run was cut short; 2 could not set up; 3 the server went away; 4 the watchdog fired.
// --twin VOICES: a client load_twin, bellkeys' stand-in and witness: its process callback counts
// the events at its input midi_in and mixes VOICES voices from a table (about as long as bellkeys
// takes for 128 bells here), with nothing that could block: no locks, no allocation, no other
// thread, memory locked. With --busy-ns it starts at VOICES and then mixes more or fewer voices
// (one each cycle, 1..1024) so that its callback takes NS nanoseconds on average: as long as
// bellkeys' (measured first), whatever this machine's speed. On SIGTERM one JSON line (received,
// cycles, xruns, its DSP load, the voices it ended on).
#include <errno.h>
#include <jack/jack.h>
#include <jack/midiport.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static jack_client_t *client;
static jack_port_t *out, *in;
static uint32_t rng = 2463534242u;
static int64_t gap_limit, total_frames;
// Process callback only.
static int64_t elapsed = -1;            // frames from the first sending cycle to this cycle's first
static int64_t next_event;              // the next event's frame, counted the same way
static jack_nframes_t previous_start, previous_nframes;
static int have_previous, pedal;
// Shared.
static _Atomic int sending, finished, stop, gone;
#include <sys/mman.h>
static _Atomic long sent[4], late, gaps, write_errors, cycles, xruns, received, most_in_a_cycle;

static uint32_t next_random(void) { rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5; return rng; }

static int process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    jack_nframes_t start = jack_last_frame_time(client);
    int32_t step = (int32_t)(start - previous_start);
    if (have_previous && start != previous_start + previous_nframes && nframes == previous_nframes)
        atomic_fetch_add(&gaps, 1);
    have_previous = 1;
    previous_start = start;
    previous_nframes = nframes;
    atomic_fetch_add(&cycles, 1);
    void *buffer = jack_port_get_buffer(out, nframes);
    jack_midi_clear_buffer(buffer);
    if (!atomic_load(&sending) || atomic_load(&finished)) return 0;
    elapsed = elapsed < 0 ? 0 : elapsed + step;
    long written = 0;
    while (next_event < elapsed + (int64_t)nframes) {
        if (next_event >= total_frames) { atomic_store(&finished, 1); break; }
        int64_t offset = next_event - elapsed;
        if (offset < 0) { offset = 0; atomic_fetch_add(&late, 1); }     // after a jump in frame time
        uint32_t r = next_random(), kind = r % 100;
        unsigned char channel = (r >> 8) & 1, note = 60 + (r >> 9) % 13, bytes[3];
        int type;
        if (kind < 50) { type = 0; bytes[0] = 0x90 | channel; bytes[1] = note; bytes[2] = 30 + (r >> 16) % 98; }
        else if (kind < 88) { type = 1; bytes[0] = 0x80 | channel; bytes[1] = note; bytes[2] = 0; }
        else if (kind < 96) { type = 2; bytes[0] = 0xB0 | channel; bytes[1] = 7; bytes[2] = 64 + (r >> 16) % 64; }
        else { type = 3; pedal = !pedal; bytes[0] = 0xB0 | channel; bytes[1] = 64; bytes[2] = pedal ? 127 : 0; }
        if (jack_midi_event_write(buffer, (jack_nframes_t)offset, bytes, 3) == 0) { atomic_fetch_add(&sent[type], 1); written++; }
        else atomic_fetch_add(&write_errors, 1);
        next_event += next_random() % (uint32_t)(gap_limit + 1);
    }
    if (written > atomic_load(&most_in_a_cycle)) atomic_store(&most_in_a_cycle, written);
    return 0;
}

// The twin: mixes `twin_voices` voices from a 16 MiB table (larger than the caches, about the
// bells' 12.3 MiB)
// with linear interpolation into two channels, timing each cycle as bellkeys does.
#define TABLE_FRAMES 4194304
#define MIX_FRAMES 8192
static float *table, *mix;
static int twin_voices;                 // process callback only, once active
static _Atomic int voices_now;          // the same, for main
static double phase[1024], increment[1024];
static float gain[1024];
static volatile float mixed;            // keeps the mix from being optimised away
static _Atomic uint64_t busy_ns, longest_ns;
static int64_t target_ns, credit_ns;    // --busy-ns, and what the cycles so far were short of it

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int twin_process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    uint64_t began = now_ns();
    atomic_fetch_add(&received, (long)jack_midi_get_event_count(jack_port_get_buffer(in, nframes)));
    atomic_fetch_add(&cycles, 1);
    jack_nframes_t frames = nframes < MIX_FRAMES ? nframes : MIX_FRAMES;
    memset(mix, 0, 2 * MIX_FRAMES * sizeof *mix);
    for (int v = 0; v < twin_voices; v++) {
        double p = phase[v], step = increment[v];
        float g = gain[v];
        for (jack_nframes_t i = 0; i < frames; i++, p += step) {
            uint32_t k = (uint32_t)p;
            float f = (float)(p - k), a = table[k & (TABLE_FRAMES - 1)], b = table[(k + 1) & (TABLE_FRAMES - 1)];
            float x = (a + (b - a) * f) * g;
            mix[i] += x;
            mix[MIX_FRAMES + i] += 0.5f * x;
        }
        phase[v] = p >= TABLE_FRAMES ? p - TABLE_FRAMES : p;
    }
    mixed = mix[frames - 1] + mix[MIX_FRAMES + frames - 1];
    uint64_t busy = now_ns() - began;
    atomic_fetch_add(&busy_ns, busy);
    if (busy > atomic_load(&longest_ns)) atomic_store(&longest_ns, busy);
    if (target_ns > 0) {
        credit_ns += target_ns - (int64_t)busy;
        if (credit_ns > 0 && twin_voices < 1024) twin_voices++;
        else if (credit_ns < 0 && twin_voices > 1) twin_voices--;
        atomic_store(&voices_now, twin_voices);
    }
    return 0;
}

static int on_xrun(void *arg) { (void)arg; atomic_fetch_add(&xruns, 1); return 0; }
static void on_shutdown(jack_status_t code, const char *reason, void *arg) { (void)code; (void)reason; (void)arg; atomic_store(&gone, 1); }
static void on_signal(int number) { (void)number; atomic_store(&stop, 1); }
static void on_watchdog(int number) {
    (void)number;
    static const char text[] = "load_send: watchdog: still running long after it should have ended\n";
    (void)!write(2, text, sizeof text - 1);
    _exit(4);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = 0, rate = 2000;
    const char *targets[4] = { "bellkeys:midi_in" };
    int target_count = 0;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    jack_status_t status;
    if ((argc == 3 || (argc == 5 && !strcmp(argv[3], "--busy-ns"))) && !strcmp(argv[1], "--twin")) {
        twin_voices = atoi(argv[2]);
        if (twin_voices < 0 || twin_voices > 1024) { fprintf(stderr, "load_send: --twin 0..1024\n"); return 2; }
        if (argc == 5) target_ns = atoll(argv[4]);
        atomic_store(&voices_now, twin_voices);
        table = malloc(TABLE_FRAMES * sizeof *table);
        mix = malloc(2 * MIX_FRAMES * sizeof *mix);
        if (!table || !mix) { fprintf(stderr, "load_send: out of memory\n"); return 2; }
        for (int i = 0; i < TABLE_FRAMES; i++) table[i] = (float)(next_random() % 65536) / 65536.0f - 0.5f;
        for (int v = 0; v < 1024; v++) {
            phase[v] = next_random() % TABLE_FRAMES;
            increment[v] = 0.5 + (next_random() % 1000) / 1000.0;
            gain[v] = 1.0f / (1 + v);
        }
        mlockall(MCL_CURRENT | MCL_FUTURE);
        client = jack_client_open("load_twin", JackNoStartServer, &status);
        if (!client) { fprintf(stderr, "load_send: cannot open a JACK client (status 0x%x)\n", status); return 2; }
        jack_on_info_shutdown(client, on_shutdown, NULL);
        in = jack_port_register(client, "midi_in", JACK_DEFAULT_MIDI_TYPE, JackPortIsInput, 0);
        if (!in) { fprintf(stderr, "load_send: cannot register midi_in\n"); return 2; }
        jack_set_process_callback(client, twin_process, NULL);
        jack_set_xrun_callback(client, on_xrun, NULL);
        if (jack_activate(client)) { fprintf(stderr, "load_send: cannot activate the client\n"); return 2; }
        double cycle_ns = 1e9 * jack_get_buffer_size(client) / jack_get_sample_rate(client);
        while (!atomic_load(&stop) && !atomic_load(&gone)) usleep(100000);
        long n = atomic_load(&cycles);
        printf("{\"received\": %ld, \"cycles\": %ld, \"xruns\": %ld, \"dsp_mean\": %.3f, \"dsp_longest\": %.2f, \"voices\": %d}\n",
               atomic_load(&received), n, atomic_load(&xruns),
               n ? atomic_load(&busy_ns) / (double)n / cycle_ns * 100 : 0.0, atomic_load(&longest_ns) / cycle_ns * 100,
               atomic_load(&voices_now));
        fflush(stdout);
        if (atomic_load(&gone)) return 3;
        jack_client_close(client);
        return 0;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--target") && target_count < 4) targets[target_count++] = argv[i + 1];
        else if (!strcmp(argv[i], "--seed")) rng = (uint32_t)strtoul(argv[i + 1], NULL, 10) | 1;
        else { fprintf(stderr, "load_send: unknown option %s\n", argv[i]); return 2; }
    }
    if (argc % 2 == 0 || seconds <= 0 || rate <= 0) {
        fprintf(stderr, "usage: load_send --seconds S [--rate EVENTS_PER_SECOND] [--target PORT]... [--seed N]\n"
                        "       load_send --twin VOICES [--busy-ns NS]\n");
        return 2;
    }
    signal(SIGALRM, on_watchdog);
    alarm((unsigned)(seconds + 30));
    client = jack_client_open("load_send", JackNoStartServer, &status);
    if (!client) { fprintf(stderr, "load_send: cannot open a JACK client (status 0x%x)\n", status); return 2; }
    jack_on_info_shutdown(client, on_shutdown, NULL);
    out = jack_port_register(client, "midi_out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput, 0);
    if (!out) { fprintf(stderr, "load_send: cannot register midi_out\n"); return 2; }
    jack_nframes_t sample_rate = jack_get_sample_rate(client);
    gap_limit = (int64_t)(2.0 * sample_rate / rate + 0.5);
    total_frames = (int64_t)(seconds * sample_rate + 0.5);
    jack_set_process_callback(client, process, NULL);
    jack_set_xrun_callback(client, on_xrun, NULL);
    if (jack_activate(client)) { fprintf(stderr, "load_send: cannot activate the client\n"); return 2; }
    // A target may still be starting: its ports come first, then its activation.
    double give_up = now_seconds() + 10;
    for (int i = 0; i < (target_count ? target_count : 1); i++) {
        int err;
        while ((err = jack_connect(client, jack_port_name(out), targets[i])) && err != EEXIST) {
            if (now_seconds() > give_up || atomic_load(&gone) || atomic_load(&stop)) {
                fprintf(stderr, "load_send: cannot connect to %s (%d)\n", targets[i], err);
                return 2;
            }
            usleep(20000);
        }
    }
    usleep(500000);
    atomic_store(&sending, 1);
    fprintf(stderr, "load_send: sending\n");
    double started = now_seconds(), load_sum = 0, load_max = 0;
    long load_count = 0;
    while (!atomic_load(&finished) && !atomic_load(&gone) && !atomic_load(&stop)) {
        usleep(100000);
        if (now_seconds() - started < 1) continue;
        double load = jack_cpu_load(client);
        load_sum += load;
        load_count++;
        if (load > load_max) load_max = load;
    }
    int done = atomic_load(&finished), server_gone = atomic_load(&gone);
    long total = atomic_load(&sent[0]) + atomic_load(&sent[1]) + atomic_load(&sent[2]) + atomic_load(&sent[3]);
    printf("{\"seconds\": %.3f, \"rate\": %u, \"frames\": %lld, \"sent\": %ld, \"note_on\": %ld, \"note_off\": %ld, "
           "\"cc7\": %ld, \"cc64\": %ld, \"late\": %ld, \"write_errors\": %ld, \"cycles\": %ld, \"gaps\": %ld, "
           "\"xruns\": %ld, \"most_in_a_cycle\": %ld, \"dsp_mean\": %.3f, \"dsp_max\": %.3f, \"dsp_reads\": %ld, \"finished\": %s, "
           "\"server_gone\": %s}\n",
           now_seconds() - started, sample_rate, (long long)total_frames, total, atomic_load(&sent[0]),
           atomic_load(&sent[1]), atomic_load(&sent[2]), atomic_load(&sent[3]), atomic_load(&late),
           atomic_load(&write_errors), atomic_load(&cycles), atomic_load(&gaps), atomic_load(&xruns), atomic_load(&most_in_a_cycle),
           load_count ? load_sum / load_count : 0.0, load_max, load_count, done ? "true" : "false",
           server_gone ? "true" : "false");
    fflush(stdout);
    if (server_gone) return 3;
    jack_client_close(client);
    return atomic_load(&write_errors) || !done ? 1 : 0;
}
