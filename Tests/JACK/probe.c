// probe: the test instrument for bellkeys on JACK (see Tests/JACK/run). Two clients in one
// process, so that the graph order around the client under test can be chosen:
//   probe_send   MIDI output midi_out: plays a schedule of MIDI events at exact frames
//   probe_rec    audio inputs in_1..in_K: records what the target plays, from frame T0 on
//
//   probe --schedule FILE --seconds S --out TAKE.f32 [--target bellkeys] [--channels K]
//         [--order before|after] [--wait S]
//
// SIGUSR1 ends the take early, at the end of the cycle the recorder is in or runs next: for a
// caller that waits on the server (say, for a new period) and cannot know the take's length
// beforehand. S is then the longest it may last; the events due after the end are not sent and
// do not count as scheduled.
//
// Schedule lines: "<frame> <status> <data1> [<data2>]" in decimal, frames counted from T0, in
// increasing order; '#' starts a comment. T0 is the first cycle boundary at least 0.5 s after
// everything is connected, so an event at frame f goes out at offset f mod the period for as
// long as the period does not change.
//
// --order before (the default): probe_send:midi_out -> TARGET:midi_in, TARGET:out_i ->
//   probe_rec:in_i. The sender runs before the target, which gets each event in its cycle.
// --order after: probe_send also has an audio input after_in, and TARGET:out_1 -> after_in is
//   connected first, so the sender runs after the target; the MIDI connection made next closes
//   a loop, which JACK2 (1.9.21) makes a feedback connection: the target reads the sender's
//   buffer before the sender fills it, so it gets every event exactly one cycle late.
//
// Writes TAKE.f32: float32, K channels interleaved, S seconds from T0 (frames the recorder never
// saw stay 0), then one JSON line on stdout. Frames in it are counted from T0:
//   t0, rate, order, frames (asked, or up to the end SIGUSR1 asked for), recorded (frames the
//   recorder copied), ended_early (SIGUSR1)
//   periods      [[first frame, nframes], ...]: each period size seen, from where
//   gaps         cycles whose frame time was not the previous cycle's end (gap_frames: total)
//   resize_skips such jumps at a period change: JACK2 advances its frame time by the old period
//                there, but no cycle is missed; every client's own frame count runs on
//   jumps        [[expected frame, frames skipped, 1 if at a period change], ...]
//   events       [[frame, cycle start, offset], ...] as sent; late (sent at offset 0 of a cycle
//                after theirs), scheduled, sent, write_errors
//   xruns        as the server reported them; server_gone, server_reason, timed_out
// Stderr gets "probe: T0 <frame>, <n> frames from now" when T0 is chosen, for callers that time
// actions against it.
//
// Exit status: 0 everything sent on time and recorded without a gap; 1 recorded, but with a
// gap, a late or unsent event, or too slowly (timeout); 2 could not set up; 3 the server went
// away; 4 the watchdog fired (something in libjack blocked).
#include <errno.h>
#include <jack/jack.h>
#include <jack/midiport.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 4096
#define MAX_CHANNELS 8
#define MAX_MARKS 32            // periods and jumps remembered for the summary
#define LEAD_SECONDS 0.5

struct event { int64_t frame; unsigned char bytes[3]; int size; jack_nframes_t cycle, offset; int late; };
// A period (value: nframes) or a jump in frame time (value: frames skipped; resize: at a period change).
struct mark { jack_nframes_t frame; int32_t value; int resize; };

static jack_client_t *sender, *recorder;
static jack_port_t *midi_out, *after_in, *inputs[MAX_CHANNELS];
static int channels = 2;

static struct event events[MAX_EVENTS];
static int event_count;
static int next_event;                  // sender callback only
static _Atomic int events_sent;
static _Atomic int write_errors, late_events;

static float *take;                     // frames * channels, interleaved
static _Atomic int64_t frames;          // lowered once, by the recorder, when SIGUSR1 ends the take
static volatile sig_atomic_t end_asked;
static _Atomic int64_t recorded;
static _Atomic int done;

// T0 as a frame time, or -1 until main chooses it.
static _Atomic int64_t t0 = -1;
// The sender's latest cycle: start frame << 32 | nframes (one word, so main reads a matching pair).
static _Atomic uint64_t last_cycle;

// Recorder callback only until main reads them after the recording is done.
static int have_previous;
static jack_nframes_t previous_start, previous_nframes;
static struct mark periods[MAX_MARKS], gaps[MAX_MARKS];
static int period_count, gap_count, skip_count;
static int64_t gap_total;

static _Atomic int xruns, server_gone;
static char gone_reason[256];

static int send_process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    jack_nframes_t start = jack_last_frame_time(sender);
    atomic_store(&last_cycle, (uint64_t)start << 32 | nframes);
    void *buffer = jack_port_get_buffer(midi_out, nframes);
    jack_midi_clear_buffer(buffer);
    int64_t origin = atomic_load(&t0);
    if (origin < 0) return 0;
    while (next_event < event_count) {
        struct event *e = &events[next_event];
        if (e->frame >= atomic_load(&frames)) break;   // after a take ended early
        // Frame times wrap at 2^32; the difference in 32 bits is right across the wrap.
        int32_t offset = (int32_t)((jack_nframes_t)(origin + e->frame) - start);
        if (offset >= (int32_t)nframes) break;
        if (offset < 0) { e->late = 1; offset = 0; atomic_fetch_add(&late_events, 1); }
        e->cycle = start;
        e->offset = (jack_nframes_t)offset;
        if (jack_midi_event_write(buffer, (jack_nframes_t)offset, e->bytes, (size_t)e->size) != 0)
            atomic_fetch_add(&write_errors, 1);
        next_event++;
    }
    atomic_store(&events_sent, next_event);
    return 0;
}

static int record_process(jack_nframes_t nframes, void *arg) {
    (void)arg;
    jack_nframes_t start = jack_last_frame_time(recorder);
    int64_t origin = atomic_load(&t0);
    float *in[MAX_CHANNELS];
    for (int c = 0; c < channels; c++) in[c] = jack_port_get_buffer(inputs[c], nframes);
    if (!have_previous || nframes != previous_nframes) {
        if (period_count < MAX_MARKS) periods[period_count++] = (struct mark){ start, (int32_t)nframes, 0 };
    }
    // Counted from when T0 is chosen, if the frames skipped reach T0 (a jump in the lead-in,
    // seen as clients join a busy server, loses nothing recorded or sent). JACK2's frame time
    // also jumps when the period changes, though no cycle is missed: a skip, not a gap.
    if (have_previous && origin >= 0 && start != previous_start + previous_nframes
        && (int32_t)(start - (jack_nframes_t)origin) > 0) {
        int32_t skipped = (int32_t)(start - (previous_start + previous_nframes));
        int resize = nframes != previous_nframes;
        if (gap_count + skip_count < MAX_MARKS)
            gaps[gap_count + skip_count] = (struct mark){ previous_start + previous_nframes, skipped, resize };
        if (resize) skip_count++;
        else { gap_count++; gap_total += skipped; }
    }
    have_previous = 1;
    previous_start = start;
    previous_nframes = nframes;
    if (origin < 0 || atomic_load(&done)) return 0;
    int64_t first = (int32_t)(start - (jack_nframes_t)origin);   // this cycle's first frame, from T0
    int64_t end = atomic_load(&frames);
    if (end_asked && first + nframes < end) {
        end = first + nframes > 0 ? first + nframes : nframes;
        atomic_store(&frames, end);
    }
    int64_t from = first < 0 ? -first : 0, to = end - first < nframes ? end - first : nframes;
    for (int64_t i = from; i < to; i++)
        for (int c = 0; c < channels; c++) take[(first + i) * channels + c] = in[c][i];
    if (to > from) atomic_fetch_add(&recorded, to - from);
    if (first + nframes >= end) atomic_store(&done, 1);
    return 0;
}

static int on_xrun(void *arg) {
    (void)arg;
    atomic_fetch_add(&xruns, 1);
    return 0;
}

static void on_shutdown(jack_status_t code, const char *reason, void *arg) {
    (void)code; (void)arg;
    if (atomic_exchange(&server_gone, 1) == 0) snprintf(gone_reason, sizeof gone_reason, "%s", reason ? reason : "");
}

static void on_end(int signal) {
    (void)signal;
    end_asked = 1;
}

static void on_watchdog(int signal) {
    (void)signal;
    static const char text[] = "probe: watchdog: still running long after the recording should have ended\n";
    (void)!write(2, text, sizeof text - 1);
    _exit(4);
}

static void fail(const char *what) {
    fprintf(stderr, "probe: %s\n", what);
    exit(2);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void read_schedule(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); exit(2); }
    char line[256];
    for (int number = 1; fgets(line, sizeof line, f); number++) {
        line[strcspn(line, "#\n")] = 0;
        long long frame;
        int status, d1, d2 = -1, n = sscanf(line, "%lld %d %d %d", &frame, &status, &d1, &d2);
        if (n <= 0) continue;
        if (n < 3 || event_count == MAX_EVENTS || frame < 0 || status < 0x80 || status > 0xEF
            || (event_count && frame < events[event_count - 1].frame)) {
            fprintf(stderr, "probe: %s:%d: not \"<frame> <status> <data1> <data2>\" in frame order\n", path, number);
            exit(2);
        }
        struct event *e = &events[event_count++];
        e->frame = frame;
        e->bytes[0] = (unsigned char)status;
        e->bytes[1] = (unsigned char)d1;
        e->bytes[2] = (unsigned char)(d2 < 0 ? 0 : d2);
        e->size = (status & 0xE0) == 0xC0 ? 2 : 3;      // program change and channel pressure
    }
    fclose(f);
}

static jack_client_t *open_client(const char *name) {
    jack_status_t status;
    jack_client_t *client = jack_client_open(name, JackNoStartServer, &status);
    if (!client) {
        fprintf(stderr, "probe: cannot open JACK client %s (status 0x%x%s)\n", name, status,
                status & JackServerFailed ? ": no server" : "");
        exit(2);
    }
    jack_on_info_shutdown(client, on_shutdown, NULL);
    return client;
}

// Retries until `give_up`: a client's ports exist before it is activated, and JACK refuses to
// connect the ports of an inactive client.
static void connect_ports(const char *source, const char *destination, double give_up) {
    int err;
    while ((err = jack_connect(sender, source, destination)) && err != EEXIST) {
        if (now_seconds() > give_up || atomic_load(&server_gone)) {
            fprintf(stderr, "probe: cannot connect %s to %s (%d)\n", source, destination, err);
            exit(2);
        }
        usleep(20000);
    }
}

int main(int argc, char **argv) {
    const char *target = "bellkeys", *schedule = NULL, *out = NULL, *order = "before";
    double seconds = 0, wait_seconds = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--target")) target = argv[i + 1];
        else if (!strcmp(argv[i], "--channels")) channels = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--schedule")) schedule = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        else if (!strcmp(argv[i], "--order")) order = argv[i + 1];
        else if (!strcmp(argv[i], "--wait")) wait_seconds = atof(argv[i + 1]);
        else { fprintf(stderr, "probe: unknown option %s\n", argv[i]); return 2; }
    }
    int after = !strcmp(order, "after");
    if (argc % 2 == 0 || !schedule || !out || seconds <= 0 || channels < 1 || channels > MAX_CHANNELS
        || (!after && strcmp(order, "before")))
        fail("usage: probe --schedule FILE --seconds S --out TAKE.f32 [--target NAME] [--channels 1-8] "
             "[--order before|after] [--wait S]");
    read_schedule(schedule);
    signal(SIGALRM, on_watchdog);
    signal(SIGUSR1, on_end);
    alarm((unsigned)(wait_seconds + LEAD_SECONDS + 3 * seconds + 20));

    sender = open_client("probe_send");
    recorder = open_client("probe_rec");
    jack_nframes_t rate = jack_get_sample_rate(recorder);
    int64_t asked = (int64_t)(seconds * rate + 0.5);
    atomic_store(&frames, asked);
    take = calloc((size_t)(asked * channels), sizeof *take);
    if (!take) fail("cannot allocate the take");
    // Fault every page in now, so the recorder callback never takes a page fault.
    if (mlock(take, (size_t)(asked * channels) * sizeof *take) != 0) memset(take, 0, (size_t)(asked * channels) * sizeof *take);

    midi_out = jack_port_register(sender, "midi_out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput, 0);
    if (after) after_in = jack_port_register(sender, "after_in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    for (int c = 0; c < channels; c++) {
        char name[16];
        snprintf(name, sizeof name, "in_%d", c + 1);
        inputs[c] = jack_port_register(recorder, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
        if (!inputs[c]) fail("cannot register an input port");
    }
    if (!midi_out || (after && !after_in)) fail("cannot register the sender's ports");
    jack_set_process_callback(sender, send_process, NULL);
    jack_set_process_callback(recorder, record_process, NULL);
    jack_set_xrun_callback(recorder, on_xrun, NULL);
    if (jack_activate(sender) || jack_activate(recorder)) fail("cannot activate the clients");

    // The target may still be loading: wait for its last port.
    char midi_in[320], outs[MAX_CHANNELS][320];
    snprintf(midi_in, sizeof midi_in, "%s:midi_in", target);
    for (int c = 0; c < channels; c++) snprintf(outs[c], sizeof outs[c], "%s:out_%d", target, c + 1);
    double give_up = now_seconds() + wait_seconds;
    while (!jack_port_by_name(sender, midi_in) || !jack_port_by_name(sender, outs[channels - 1])) {
        if (now_seconds() > give_up || atomic_load(&server_gone)) {
            fprintf(stderr, "probe: no ports %s and %s after %.1f s\n", midi_in, outs[channels - 1], wait_seconds);
            return 2;
        }
        usleep(20000);
    }
    for (int c = 0; c < channels; c++) connect_ports(outs[c], jack_port_name(inputs[c]), give_up);
    if (after) connect_ports(outs[0], jack_port_name(after_in), give_up);
    connect_ports(jack_port_name(midi_out), midi_in, give_up);

    while (atomic_load(&last_cycle) == 0) {
        if (now_seconds() > give_up + 2 || atomic_load(&server_gone)) fail("the sender never ran");
        usleep(1000);
    }
    uint64_t cycle = atomic_load(&last_cycle);
    jack_nframes_t cycle_start = (jack_nframes_t)(cycle >> 32), period = (jack_nframes_t)(cycle & 0xFFFFFFFF);
    jack_nframes_t wanted = jack_frame_time(sender) + (jack_nframes_t)(LEAD_SECONDS * rate + 0.5);
    jack_nframes_t origin = cycle_start + (wanted - cycle_start + period - 1) / period * period;
    atomic_store(&t0, origin);
    fprintf(stderr, "probe: T0 %u, %u frames from now (period %u)\n", origin, origin - jack_frame_time(sender), period);

    double started = now_seconds(), deadline = started + LEAD_SECONDS + 2 * seconds + 5;
    int timed_out = 0;
    while (!atomic_load(&done) && !atomic_load(&server_gone)) {
        if (now_seconds() > deadline) { timed_out = 1; break; }
        usleep(5000);
    }
    int gone = atomic_load(&server_gone);
    if (!gone) {
        jack_deactivate(recorder);
        jack_deactivate(sender);
    }

    int64_t length = atomic_load(&frames);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(take, sizeof *take, (size_t)(length * channels), f) != (size_t)(length * channels) || fclose(f))
        fail("cannot write the take");

    int sent = atomic_load(&events_sent), scheduled = 0;
    while (scheduled < event_count && events[scheduled].frame < length) scheduled++;
    printf("{\"t0\": %u, \"rate\": %u, \"order\": \"%s\", \"frames\": %lld, \"recorded\": %lld, \"ended_early\": %s, "
           "\"periods\": [", origin, rate, order, (long long)length, (long long)atomic_load(&recorded),
           length < asked ? "true" : "false");
    for (int i = 0; i < period_count; i++)
        printf("%s[%d, %d]", i ? ", " : "", (int32_t)(periods[i].frame - origin), periods[i].value);
    printf("], \"gaps\": %d, \"gap_frames\": %lld, \"resize_skips\": %d, \"jumps\": [", gap_count, (long long)gap_total, skip_count);
    for (int i = 0; i < gap_count + skip_count && i < MAX_MARKS; i++)
        printf("%s[%d, %d, %d]", i ? ", " : "", (int32_t)(gaps[i].frame - origin), gaps[i].value, gaps[i].resize);
    printf("], \"events\": [");
    for (int i = 0; i < sent; i++)
        printf("%s[%lld, %d, %u]", i ? ", " : "", (long long)events[i].frame, (int32_t)(events[i].cycle - origin), events[i].offset);
    printf("], \"scheduled\": %d, \"sent\": %d, \"late\": %d, \"write_errors\": %d, \"xruns\": %d, "
           "\"timed_out\": %s, \"server_gone\": %s, \"server_reason\": \"",
           scheduled, sent, atomic_load(&late_events), atomic_load(&write_errors), atomic_load(&xruns),
           timed_out ? "true" : "false", gone ? "true" : "false");
    for (const char *p = gone ? gone_reason : ""; *p; p++)
        if (*p >= ' ' && *p != '"' && *p != '\\') putchar(*p);
    printf("\"}\n");
    fflush(stdout);

    if (gone) return 3;         // no jack_client_close: it would talk to a server that is gone
    jack_client_close(sender);
    jack_client_close(recorder);
    return timed_out || gap_count || sent < scheduled || atomic_load(&late_events) || atomic_load(&write_errors) ? 1 : 0;
}
