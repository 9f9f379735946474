// probe: the test instrument inside the VM. Plays a scripted performance as raw MIDI bytes into
// a virtual keyboard (snd-virmidi), while recording the loopback card's capture side (what
// bellkeys played) with timestamps that tie capture frames to the monotonic clock.
//
//   probe --capture plughw:0,1,0 --midi hw:1,0,0 --script perf.txt --seconds 6 --out DIR
//
// Script lines: "<ms> <hex byte> ..." sends those bytes at that time after the start;
// "<ms> !<shell command>" runs a command (the virtual keyboard is closed first, so the
// command may unload it). Outputs in DIR: capture.raw (S16_LE, mono, 48 kHz), sent.txt
// ("<ns> <hex bytes>" per message, monotonic time after the write returned), stamps.txt
// ("<ns> <frame>": capture frame `frame` was recorded at monotonic time ns).
// With --queue NAME --listen CLIENT:PORT it also records when each message reached bellkeys'
// port, and bellkeys' playback position (see struct listener).
//
// Soak mode, instead of a script: --generate RATE sends RATE MIDI events per second (notes on
// and off across and beyond the 13 keys, CC7, CC11, CC64, CC123, pitch bend) from a fixed
// pseudo-random sequence, in 5 ms batches, until --tail seconds before the end; then it
// releases everything with CC64 0 and CC123 on both channels used (no note-offs).
// --replug SECONDS unplugs the virtual keyboard (unbinds snd_virmidi.0) at every multiple of
// SECONDS, plugs it back 1 s later and plays again 1 s after that; events due meanwhile are not
// sent. sent.txt then has one line per second ("<ns> sent <n>") and one per unplug, plug and the
// final all-notes-off.
#include <alsa/asoundlib.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RATE 48000

static void die(const char *what, int err) {
    fprintf(stderr, "probe: %s: %s\n", what, err ? snd_strerror(err) : strerror(errno));
    exit(2);
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct generator {
    double rate;
    int64_t replug_ns, stop_ns;
    uint64_t seed;
    int64_t due, sent, unsent, sent_this_second, second;
    int unplugs, unplugged, finished;
    int64_t unplugged_at, resume_at;
    unsigned char held[32];
    int held_count;
};

static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static const char *virmidi_driver = "/sys/bus/platform/drivers/snd_virmidi";

static void write_sysfs(const char *file, const char *value) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", virmidi_driver, file);
    FILE *f = fopen(path, "w");
    if (f) { fputs(value, f); fclose(f); }
}

// Writes `count` bytes to the keyboard, opening it if needed; false if it cannot be opened.
static int send_bytes(snd_rawmidi_t **midi, const char *name, const unsigned char *bytes, int count) {
    if (!*midi && snd_rawmidi_open(NULL, midi, name, 0) < 0) { *midi = NULL; return 0; }
    return snd_rawmidi_write(*midi, bytes, count) == count;
}

// One message of the soak's sequence into `m`; returns its length.
static int soak_message(struct generator *g, unsigned char *m) {
    uint64_t r = next_random(&g->seed);
    unsigned channel = (r >> 8) % 10 == 0 ? 1 : 0, pick = (r >> 16) % 100;
    if (pick < 80) {
        if (g->held_count > 0 && (g->held_count >= 24 || (r >> 24) % 2)) {
            int i = (int)((r >> 32) % (uint64_t)g->held_count);
            m[0] = 0x80 | (g->held[i] >> 7); m[1] = g->held[i] & 0x7F; m[2] = 0x40;
            g->held[i] = g->held[--g->held_count];
        } else {
            unsigned note = 55 + (unsigned)((r >> 32) % 23);    // 55..77: the 13 keys and beyond
            g->held[g->held_count++] = (unsigned char)(channel << 7 | note);
            m[0] = 0x90 | channel; m[1] = (unsigned char)note; m[2] = (unsigned char)(1 + (r >> 40) % 127);
        }
        return 3;
    }
    m[0] = 0xB0 | channel;
    if (pick < 88) { m[1] = 7; m[2] = (unsigned char)(40 + (r >> 32) % 88); }
    else if (pick < 92) { m[1] = 11; m[2] = (unsigned char)(64 + (r >> 32) % 64); }
    else if (pick < 97) { m[1] = 64; m[2] = (r >> 32) % 2 ? 127 : 0; }
    else if (pick < 98) {
        m[1] = 123; m[2] = 0;
        for (int i = 0; i < g->held_count; i++)
            if ((g->held[i] >> 7) == channel) g->held[i--] = g->held[--g->held_count];
    } else { m[0] = 0xE0 | channel; m[1] = (r >> 32) & 0x7F; m[2] = (r >> 40) & 0x7F; }
    return 3;
}

// Sends every event due by `elapsed` ns after the start, unplugging and plugging as scheduled.
static void generate_events(struct generator *g, snd_rawmidi_t **midi, const char *name, FILE *sent, int64_t elapsed) {
    if (g->finished) return;
    if (g->replug_ns > 0 && elapsed < g->stop_ns) {
        int64_t cycle = elapsed / g->replug_ns;
        if (!g->unplugged && cycle > g->unplugs) {
            if (*midi) { snd_rawmidi_drain(*midi); snd_rawmidi_close(*midi); *midi = NULL; }
            write_sysfs("unbind", "snd_virmidi.0");
            fprintf(sent, "%lld unplugged\n", (long long)now_ns());
            g->unplugs++;
            g->unplugged = 1;
            g->unplugged_at = elapsed;
        } else if (g->unplugged && elapsed - g->unplugged_at >= 1000000000) {
            write_sysfs("bind", "snd_virmidi.0");
            fprintf(sent, "%lld plugged\n", (long long)now_ns());
            g->unplugged = 0;
            g->resume_at = elapsed + 1000000000;
        }
    }
    int64_t until = elapsed < g->stop_ns ? elapsed : g->stop_ns;
    int64_t target = (int64_t)((double)until * g->rate / 1e9);
    unsigned char batch[3 * 64];
    while (g->due < target) {
        int n = 0;
        while (g->due < target && n + 3 <= (int)sizeof batch) { n += soak_message(g, batch + n); g->due++; }
        int count = n / 3;
        if (g->unplugged || elapsed < g->resume_at || !send_bytes(midi, name, batch, n)) g->unsent += count;
        else { g->sent += count; g->sent_this_second += count; }
    }
    if (elapsed / 1000000000 != g->second) {
        fprintf(sent, "%lld sent %lld\n", (long long)now_ns(), (long long)g->sent_this_second);
        g->sent_this_second = 0;
        g->second = elapsed / 1000000000;
    }
    if (elapsed >= g->stop_ns) {
        if (g->unplugged) { write_sysfs("bind", "snd_virmidi.0"); g->unplugged = 0; usleep(500000); }
        // No note-offs: the pedal lifts and all-notes-off must silence what is still held.
        for (unsigned channel = 0; channel < 2; channel++) {
            unsigned char off[6] = { 0xB0 | channel, 64, 0, 0xB0 | channel, 123, 0 };
            send_bytes(midi, name, off, 6);
        }
        if (*midi) snd_rawmidi_drain(*midi);
        fprintf(sent, "%lld all notes off\n", (long long)now_ns());
        g->finished = 1;
    }
}

// Listening beside bellkeys (--queue NAME --listen CLIENT:PORT ...): a port of the probe's own,
// subscribed to the keyboard's ports and stamped on delivery with bellkeys' queue (NAME), gets each
// message right after bellkeys' port (the kernel delivers in the order of subscription; the stamp
// trails bellkeys' by milliseconds when that work is preempted in between), with the queue time
// (delivered.txt: "<queue ns> <event type> <note> <velocity>"). The queue is read against the
// monotonic clock just before and after each write and every 10 ms (queue.txt: "<ns before> <queue
// ns> <ns after>"), and the loopback card's playback side, bellkeys' device, from /proc every 50 ms
// (playback.txt: "<ns before> <ns after> <hw_ptr> <appl_ptr>"). Events are read on each pass, not
// polled for: the stamps are the kernel's, and the probe does not compete with bellkeys' MIDI
// thread for the CPU as the event arrives.
struct listener {
    snd_seq_t *seq;
    int queue;
    snd_seq_queue_status_t *status;
    FILE *delivered, *queue_file, *playback;
    int64_t last_queue, last_playback;
};

static FILE *open_out(const char *out, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", out, name);
    FILE *f = fopen(path, "w");
    if (!f) die(path, 0);
    return f;
}

static void listen_open(struct listener *l, const char *queue, const char **from, int from_count, const char *out) {
    int err;
    if ((err = snd_seq_open(&l->seq, "default", SND_SEQ_OPEN_INPUT, SND_SEQ_NONBLOCK)) < 0) die("open sequencer", err);
    snd_seq_set_client_name(l->seq, "probe");
    if ((l->queue = snd_seq_query_named_queue(l->seq, queue)) < 0) die("find bellkeys' queue", l->queue);
    snd_seq_port_info_t *info;
    snd_seq_port_info_alloca(&info);
    snd_seq_port_info_set_name(info, "probe");
    snd_seq_port_info_set_capability(info, SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE);
    snd_seq_port_info_set_type(info, SND_SEQ_PORT_TYPE_APPLICATION);
    snd_seq_port_info_set_timestamping(info, 1);
    snd_seq_port_info_set_timestamp_real(info, 1);
    snd_seq_port_info_set_timestamp_queue(info, l->queue);
    if ((err = snd_seq_create_port(l->seq, info)) < 0) die("create the listening port", err);
    for (int i = 0; i < from_count; i++) {
        snd_seq_addr_t addr;
        if ((err = snd_seq_parse_address(l->seq, &addr, from[i])) < 0) die(from[i], err);
        if ((err = snd_seq_connect_from(l->seq, snd_seq_port_info_get_port(info), addr.client, addr.port)) < 0)
            die("listen to the keyboard", err);
    }
    snd_seq_queue_status_malloc(&l->status);
    l->delivered = open_out(out, "delivered.txt");
    l->queue_file = open_out(out, "queue.txt");
    l->playback = open_out(out, "playback.txt");
}

static void listen_queue(struct listener *l) {
    int64_t before = now_ns();
    if (snd_seq_get_queue_status(l->seq, l->queue, l->status) < 0) return;
    int64_t after = now_ns();
    const snd_seq_real_time_t *t = snd_seq_queue_status_get_real_time(l->status);
    fprintf(l->queue_file, "%lld %lld %lld\n", (long long)before, (long long)t->tv_sec * 1000000000LL + t->tv_nsec, (long long)after);
    l->last_queue = after;
}

// Reads what was delivered, and the queue and the playback side when due. The /proc read
// takes the emulated guest a millisecond: it is left out within 30 ms of a scripted step.
static void listen_pass(struct listener *l, int64_t until_next_step) {
    snd_seq_event_t *ev;
    while (snd_seq_event_input(l->seq, &ev) >= 0 && ev) {
        long long stamp = (ev->flags & SND_SEQ_TIME_STAMP_MASK) == SND_SEQ_TIME_STAMP_REAL && ev->queue == l->queue
            ? (long long)ev->time.time.tv_sec * 1000000000LL + ev->time.time.tv_nsec : -1;
        int note = ev->type == SND_SEQ_EVENT_NOTEON || ev->type == SND_SEQ_EVENT_NOTEOFF;
        fprintf(l->delivered, "%lld %d %d %d\n", stamp, ev->type, note ? ev->data.note.note : -1, note ? ev->data.note.velocity : -1);
    }
    int64_t now = now_ns();
    if (now - l->last_queue >= 10000000) listen_queue(l);
    if (now - l->last_playback >= 50000000 && until_next_step > 30000000) {
        int64_t before = now_ns();
        FILE *f = fopen("/proc/asound/card0/pcm0p/sub0/status", "r");
        long long hw = -1, appl = -1;
        char line[128];
        while (f && fgets(line, sizeof line, f)) {
            sscanf(line, "hw_ptr : %lld", &hw);
            sscanf(line, "appl_ptr : %lld", &appl);
        }
        if (f) fclose(f);
        int64_t after = now_ns();
        if (hw >= 0) fprintf(l->playback, "%lld %lld %lld %lld\n", (long long)before, (long long)after, hw, appl);
        l->last_playback = after;
    }
}

static void listen_close(struct listener *l) {
    listen_pass(l, 0);
    fclose(l->delivered);
    fclose(l->queue_file);
    fclose(l->playback);
    snd_seq_queue_status_free(l->status);
    snd_seq_close(l->seq);
}

struct step { int64_t at_ns; unsigned char bytes[16]; int count; char *command; };

int main(int argc, char **argv) {
    const char *capture_name = "plughw:0,1,0", *midi_name = "hw:1,0,0", *script_path = NULL, *out = ".";
    const char *queue_name = NULL, *listen_from[4];
    int listen_count = 0;
    double seconds = 5, generate = 0, replug = 0, tail = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--capture")) capture_name = argv[i + 1];
        else if (!strcmp(argv[i], "--midi")) midi_name = argv[i + 1];
        else if (!strcmp(argv[i], "--script")) script_path = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        else if (!strcmp(argv[i], "--generate")) generate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--replug")) replug = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--tail")) tail = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--queue")) queue_name = argv[i + 1];
        else if (!strcmp(argv[i], "--listen") && listen_count < 4) listen_from[listen_count++] = argv[i + 1];
        else { fprintf(stderr, "probe: unknown option %s\n", argv[i]); return 2; }
    }

    struct step steps[4096];
    int step_count = 0;
    if (script_path) {
        FILE *script = fopen(script_path, "r");
        if (!script) die(script_path, 0);
        char line[512];
        while (fgets(line, sizeof line, script) && step_count < 4096) {
            char *p = line;
            double ms = strtod(p, &p);
            if (p == line) continue;
            struct step *s = &steps[step_count];
            memset(s, 0, sizeof *s);
            s->at_ns = (int64_t)(ms * 1e6);
            while (*p == ' ') p++;
            if (*p == '!') {
                p[strcspn(p, "\n")] = 0;
                s->command = strdup(p + 1);
            } else {
                char *end;
                unsigned long b;
                while ((b = strtoul(p, &end, 16)), end != p && s->count < 16) { s->bytes[s->count++] = (unsigned char)b; p = end; }
                if (s->count == 0) continue;
            }
            step_count++;
        }
        fclose(script);
    }

    snd_pcm_t *pcm;
    int err;
    if ((err = snd_pcm_open(&pcm, capture_name, SND_PCM_STREAM_CAPTURE, 0)) < 0) die("open capture", err);
    snd_pcm_hw_params_t *hw;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_hw_params_any(pcm, hw);
    snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED);
    if ((err = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE)) < 0) die("capture format", err);
    if ((err = snd_pcm_hw_params_set_channels(pcm, hw, 1)) < 0) die("capture channels", err);
    unsigned rate = RATE;
    if ((err = snd_pcm_hw_params_set_rate(pcm, hw, rate, 0)) < 0) die("capture rate", err);
    snd_pcm_uframes_t buffer = RATE, period = 1024;
    snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, NULL);
    snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer);
    if ((err = snd_pcm_hw_params(pcm, hw)) < 0) die("capture hw params", err);
    snd_pcm_sw_params_t *sw;
    snd_pcm_sw_params_alloca(&sw);
    snd_pcm_sw_params_current(pcm, sw);
    snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE);
    snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC);
    if ((err = snd_pcm_sw_params(pcm, sw)) < 0) die("capture sw params", err);
    snd_pcm_nonblock(pcm, 1);

    char path[512];
    snprintf(path, sizeof path, "%s/capture.raw", out);
    FILE *raw = fopen(path, "wb");
    snprintf(path, sizeof path, "%s/sent.txt", out);
    FILE *sent = fopen(path, "w");
    snprintf(path, sizeof path, "%s/stamps.txt", out);
    FILE *stamps = fopen(path, "w");
    if (!raw || !sent || !stamps) die(out, 0);

    int pfd_count = snd_pcm_poll_descriptors_count(pcm);
    struct pollfd pfds[8];
    snd_pcm_poll_descriptors(pcm, pfds, pfd_count);
    struct listener listener = { 0 };
    if (queue_name) listen_open(&listener, queue_name, listen_from, listen_count, out);
    snd_pcm_status_t *status;
    snd_pcm_status_alloca(&status);

    static int16_t frames[RATE];
    int64_t frames_read = 0, xruns = 0;
    snd_rawmidi_t *midi = NULL;
    if ((err = snd_pcm_start(pcm)) < 0) die("start capture", err);
    int64_t start = now_ns(), end = start + (int64_t)(seconds * 1e9);
    int next = 0;
    struct generator gen = { .rate = generate, .replug_ns = (int64_t)(replug * 1e9),
                             .stop_ns = (int64_t)((seconds - tail) * 1e9), .seed = 0x2545F4914F6CDD1DULL };
    for (;;) {
        int64_t now = now_ns();
        if (generate > 0) generate_events(&gen, &midi, midi_name, sent, now - start);
        while (next < step_count && now >= start + steps[next].at_ns) {
            struct step *s = &steps[next++];
            if (s->command) {
                if (midi) { snd_rawmidi_close(midi); midi = NULL; }
                int64_t before = now_ns();
                int rc = system(s->command);
                fprintf(sent, "%lld !%s (exit %d, %lld us)\n", (long long)before, s->command, rc, (long long)((now_ns() - before) / 1000));
            } else {
                if (!midi && (err = snd_rawmidi_open(NULL, &midi, midi_name, 0)) < 0) {
                    fprintf(sent, "%lld # cannot open %s: %s\n", (long long)now_ns(), midi_name, snd_strerror(err));
                    midi = NULL;
                    continue;
                }
                // The bytes left between these two times: a guest stalled in between (the
                // emulated CPU does that) makes the moment uncertain, and the analysis says so.
                if (queue_name) listen_queue(&listener);
                int64_t before = now_ns();
                snd_rawmidi_write(midi, s->bytes, s->count);
                snd_rawmidi_drain(midi);
                int64_t after = now_ns();
                if (queue_name) listen_queue(&listener);
                fprintf(sent, "%lld", (long long)before);
                for (int k = 0; k < s->count; k++) fprintf(sent, " %02x", s->bytes[k]);
                fprintf(sent, " @%lld\n", (long long)(after - before));
            }
            now = now_ns();
        }
        if (now >= end) break;
        int64_t wait = end - now;
        if (next < step_count && start + steps[next].at_ns - now < wait) wait = start + steps[next].at_ns - now;
        if (generate > 0 && wait > 5000000) wait = 5000000;
        int timeout = (int)(wait / 1000000);
        if (timeout > 20) timeout = 20;
        poll(pfds, pfd_count, timeout);
        if (queue_name) listen_pass(&listener, next < step_count ? start + steps[next].at_ns - now_ns() : INT64_MAX);
        for (;;) {
            snd_pcm_sframes_t n = snd_pcm_readi(pcm, frames, RATE);
            if (n == -EAGAIN) break;
            if (n < 0) { xruns++; snd_pcm_prepare(pcm); snd_pcm_start(pcm); continue; }
            if (snd_pcm_status(pcm, status) == 0) {
                snd_htimestamp_t t;
                snd_pcm_status_get_htstamp(status, &t);
                int64_t ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
                if (ns > 0) fprintf(stamps, "%lld %lld\n", (long long)ns, (long long)(frames_read + n + snd_pcm_status_get_avail(status)));
            }
            fwrite(frames, 2, (size_t)n, raw);
            frames_read += n;
        }
    }
    if (queue_name) listen_close(&listener);
    fclose(raw);
    fclose(sent);
    fclose(stamps);
    if (midi) snd_rawmidi_close(midi);
    snd_pcm_close(pcm);
    printf("probe: %lld frames captured, %lld capture overruns\n", (long long)frames_read, (long long)xruns);
    if (generate > 0)
        printf("probe: %lld events sent, %lld not sent while unplugged, %d unplugs\n",
               (long long)gen.sent, (long long)gen.unsent, gen.unplugs);
    return 0;
}
