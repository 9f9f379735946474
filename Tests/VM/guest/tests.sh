# Runs inside the VM as part of /init (busybox sh). Each test writes to /out/NAME/ and reports on
# file descriptor 3 (the second serial port); the host's analyze.py checks the results.
M=/modules
say() { echo "$*" >&3; }

# The modules to load, in order (the host's list: those of this kernel that are not built in, and
# not loaded already by /init).
load() { m=$1; shift; insmod $M/$m.ko "$@" || say "insmod $m failed: $(dmesg | tail -3 | tr "\n" " ")"; }
for m in $(cat $M/boot); do load $m; done
# Card 0: the loopback cable. Playback on hw:0,0 is recorded on hw:0,1.
load snd-aloop index=0 pcm_substreams=1
# The emulated CPU needs longer periods than real hardware (see docs/live.md: underruns in the VM).
PERIOD=${PERIOD:-256}
PERIODS=${PERIODS:-4}
# The bells alone (centred, dry, one timbre): the checks match the output against the bells' files
# and find onsets after digital silence, which the bundled map's hall would fill.
MAP=/bellkeys/Samples/examples/plain.json
# plughw, not default: ALSA's default here is dmix, which imposes its own 1024-frame period.
DEVICE=plughw:0,0
BELLKEYS_PID=

keyboard_in() { insmod $M/snd-virmidi.ko index=1 midi_devs=${1:-1}; }
# Unbinding the driver disconnects the card as a USB unplug does (rmmod alone is refused while
# the sequencer holds a subscription).
keyboard_out() { echo snd_virmidi.0 > /sys/bus/platform/drivers/snd_virmidi/unbind; rmmod snd-virmidi; }

# start_bellkeys NAME [options]: starts bellkeys in the background, waits until it is ready.
start_bellkeys() {
    name=$1; shift
    mkdir -p /out/$name
    # PERIOD=default: no --period or --periods, the buffer bellkeys starts at (and may grow).
    if [ "$PERIOD" = default ]; then buffer=""; else buffer="--period $PERIOD --periods $PERIODS"; fi
    /bin/bellkeys --map $MAP --device $DEVICE $buffer "$@" > /out/$name/bellkeys.log 2>&1 &
    BELLKEYS_PID=$!
    for i in $(seq 1 100); do
        grep -q "MIDI input" /out/$name/bellkeys.log 2>/dev/null && break
        kill -0 $BELLKEYS_PID 2>/dev/null || break
        sleep 0.1
    done
    sleep 0.5
}

# stop_bellkeys NAME: SIGTERM, and records the exit status and how long the exit took. A
# bellkeys that has not exited after 5 s is a failure: its threads' kernel stacks are kept.
stop_bellkeys() {
    grep -E '^(VmHWM|VmRSS)' /proc/$BELLKEYS_PID/status > /out/$1/memory.txt 2>/dev/null
    t0=$(cut -d' ' -f1 /proc/uptime)
    kill -TERM $BELLKEYS_PID
    i=0
    while [ $i -lt 500 ] && [ -e /proc/$BELLKEYS_PID ] && [ "$(cut -d' ' -f3 /proc/$BELLKEYS_PID/stat)" != Z ]; do
        usleep 10000; i=$((i + 1))
    done
    if [ $i -ge 500 ]; then
        for t in /proc/$BELLKEYS_PID/task/*; do echo "$t $(cat $t/comm) $(cat $t/wchan)"; cat $t/stack; done > /out/$1/hang.txt 2>&1
        kill -KILL $BELLKEYS_PID
    fi
    wait $BELLKEYS_PID
    status=$?
    t1=$(cut -d' ' -f1 /proc/uptime)
    echo "exit $status after SIGTERM in $(echo "$t0 $t1" | awk '{printf "%d", ($2 - $1) * 1000}') ms" > /out/$1/exit.txt
}

# note TIME_MS NOTE VELOCITY, off TIME_MS NOTE, cc TIME_MS CONTROLLER VALUE: script lines.
note() { printf '%s 90 %x %x\n' $1 $2 $3; }
off() { printf '%s 80 %x 40\n' $1 $2; }
cc() { printf '%s b0 %x %x\n' $1 $2 $3; }
pc() { printf '%s c0 %x\n' $1 $2; }

probe() { name=$1; seconds=$2; shift 2; mkdir -p /out/$name; /bin/probe --out /out/$name --seconds $seconds "$@" > /out/$name/probe.log 2>&1; }

test_autoconnect() {
    keyboard_in 2
    start_bellkeys autoconnect
    aconnect -l > /out/autoconnect/aconnect.txt 2>&1
    # Six bells, each damped (0.4 s) before the next, from both ports of the keyboard. First an
    # Active Sensing byte, as keyboards send every 300 ms, which bellkeys ignores: the first
    # message through the guest's virtual keyboard takes it a millisecond longer than the rest,
    # and would otherwise make the first note look late by that.
    echo "100 fe" > /tmp/s
    t=300
    for n in 60 64 67 72 61 70; do note $t $n 100 >> /tmp/s; off $((t + 100)) $n >> /tmp/s; t=$((t + 600)); done
    # The probe listens beside bellkeys (its own port, stamped on bellkeys' queue) and reads its
    # playback position: what each note's latency is made of (analyze.py, onsets.json).
    probe autoconnect 4.5 --script /tmp/s --queue bellkeys --listen 20:0
    # The second port plays too.
    { note 100 69 100; off 200 69; } > /tmp/s
    probe autoconnect-port2 1 --script /tmp/s --midi hw:1,1,0 --queue bellkeys --listen 21:0
    stop_bellkeys autoconnect
    # This guest has no libjack (bellkeys loads it at run time): JACK is refused in words, while
    # everything above played through ALSA.
    /bin/bellkeys --map $MAP --driver jack --no-ui > /out/autoconnect/jack.log 2>&1
    echo "exit $?" >> /out/autoconnect/jack.log
    keyboard_out
}

# Diagnostic: notes every 0.6 s from as soon as bellkeys is ready, bellkeys started afresh for
# each of 8 rounds, so that onsets sample the first seconds after start.
test_onsets() {
    keyboard_in 2
    : > /tmp/s
    t=200
    for n in 60 64 67 72 61 70 60 64; do note $t $n 100 >> /tmp/s; off $((t + 100)) $n >> /tmp/s; t=$((t + 600)); done
    for round in 1 2 3 4 5 6 7 8; do
        mkdir -p /out/onsets-$round
        /bin/bellkeys --map $MAP --device $DEVICE --period $PERIOD --periods $PERIODS > /out/onsets-$round/bellkeys.log 2>&1 &
        BELLKEYS_PID=$!
        for i in $(seq 1 100); do grep -q "MIDI input" /out/onsets-$round/bellkeys.log 2>/dev/null && break; usleep 20000; done
        probe onsets-$round 5.5 --script /tmp/s --queue bellkeys --listen 20:0
        stop_bellkeys onsets-$round
    done
    keyboard_out
}

test_hotplug() {
    start_bellkeys hotplug
    # The keyboard appears 0.5 s in; its first note comes 0.4 s after it appeared.
    { echo "500 !insmod $M/snd-virmidi.ko index=1 midi_devs=1"; note 900 62 100; off 1000 62; note 1600 65 100; off 1700 65; } > /tmp/s
    probe hotplug 4 --script /tmp/s
    stop_bellkeys hotplug
    keyboard_out
}

test_aplaymidi() {
    start_bellkeys aplaymidi
    aconnect -l > /out/aplaymidi/aconnect.txt 2>&1
    echo "300 !aplaymidi -p bellkeys /bellkeys/phrase.mid &" > /tmp/s
    probe aplaymidi 4.5 --script /tmp/s
    stop_bellkeys aplaymidi
}

test_dynamics() {
    keyboard_in 1
    start_bellkeys dynamics
    {
        # Velocity: the same bell at 127 and at 64.
        note 300 60 127; off 400 60; note 1300 60 64; off 1400 60
        # Damping: held 0.5 s, then a 0.4 s damp.
        note 2300 62 100; off 2800 62
        # CC7: full at 100 (the default), then at 50.
        note 3800 64 100; off 3900 64; cc 4700 7 50; note 4800 64 100; off 4900 64; cc 5700 7 100
        # Sustain: released at 6.1 s while the pedal is down; rings until the pedal lifts at 7.3 s.
        cc 5800 64 127; note 5900 65 100; off 6100 65; cc 7300 64 0
    } > /tmp/s
    probe dynamics 8.5 --script /tmp/s
    stop_bellkeys dynamics
    keyboard_out
}

# A map of two sets, chosen by program change through the real sequencer (snd-virmidi turns the
# keyboard's bytes into SND_SEQ_EVENT_PGMCHANGE): Full plays C4 as the bundled bell, Quiet 12 dB
# down. Program 9 is no set's: the channel keeps Quiet, and bellkeys says so once.
test_program() {
    keyboard_in 1
    cp /bellkeys/Samples/*.wav /tmp/
    printf '%s\n' '{ "sets": [' \
        '  { "name": "Full", "program": 0, "noteOff": "damp", "releaseSeconds": 0.1, "keys": [ { "note": "C4", "sample": "bell-C4.wav" } ] },' \
        '  { "name": "Quiet", "program": 1, "noteOff": "damp", "releaseSeconds": 0.1, "keys": [ { "note": "C4", "sample": "bell-C4.wav", "gainDecibels": -12 } ] } ] }' \
        > /tmp/sets.json
    saved=$MAP; MAP=/tmp/sets.json
    # What is played is checked here, not when: 512 x 4 (43 ms) rides out a stall of the emulated
    # CPU that underruns 256 x 4 (see docs/testing.md, "the buffer of program and record").
    PERIOD=512 PERIODS=4 start_bellkeys program
    { note 300 60 100; off 400 60; pc 1000 1; note 1300 60 100; off 1400 60; pc 2000 9; note 2300 60 100; off 2400 60
      pc 3000 9; pc 3100 0; note 3300 60 100; off 3400 60; } > /tmp/s
    probe program 4.5 --script /tmp/s
    stop_bellkeys program
    MAP=$saved
    keyboard_out
}

# The service as systemd starts it: the unit's own ExecStart (its /usr/bin/bellkeys is
# /bin/bellkeys here), no terminal, no home, everything else from /etc/bellkeys/bellkeys.conf (the
# package's file, every line a comment, with lines added: the plain bells, the loopback card,
# the VM's period, and a keyboard an octave low: --transpose 12). C3 rings the C4 bell.
test_service() {
    keyboard_in 1
    mkdir -p /etc/bellkeys /out/service
    { cat /bellkeys/bellkeys.conf; echo "--map $MAP"; echo "--device $DEVICE"; echo "--transpose 12"
      [ "$PERIOD" = default ] || { echo "--period $PERIOD"; echo "--periods $PERIODS"; }; } > /etc/bellkeys/bellkeys.conf
    exec_start=$(sed -n 's|^ExecStart=/usr/bin/bellkeys |/bin/bellkeys |p' /bellkeys/bellkeys.service)
    echo "$exec_start" > /out/service/exec-start.txt
    HOME=/nonexistent $exec_start < /dev/null > /out/service/bellkeys.log 2>&1 &
    BELLKEYS_PID=$!
    for i in $(seq 1 100); do
        grep -q "MIDI input" /out/service/bellkeys.log 2>/dev/null && break
        kill -0 $BELLKEYS_PID 2>/dev/null || break
        sleep 0.1
    done
    sleep 0.5
    { note 300 48 100; off 400 48; note 900 52 100; off 1000 52; note 1500 55 100; off 1600 55
      note 2100 60 100; off 2200 60; } > /tmp/s
    probe service 3.5 --script /tmp/s
    stop_bellkeys service
    rm -r /etc/bellkeys
    keyboard_out
}

# Resident memory at its peak (VmHWM, read before SIGTERM) with the bundled bells and with each
# example map of bundled sounds, a 13-note phrase played on each; where the guest has FluidR3_GM
# (Tests/VM/run puts it in, on either architecture, when this machine has it), also the General
# MIDI bells' map and the font's grand piano.
test_memory() {
    keyboard_in 1
    : > /tmp/s
    t=200
    for n in 60 61 62 63 64 65 66 67 68 69 70 71 72; do note $t $n 110 >> /tmp/s; t=$((t + 150)); done
    saved=$MAP
    maps="tags handbells bell-sets tower-ring"
    font=/usr/share/sounds/sf2/FluidR3_GM.sf2
    [ -e $font ] && maps="$maps gm-bells piano"
    for map in $maps; do
        MAP=/bellkeys/Samples/examples/$map.json
        extra=""
        [ $map = tags ] && MAP=/bellkeys/Samples/tags.json
        [ $map = piano ] && MAP=$font && extra="--program 0"
        start_bellkeys memory-$map $extra
        probe memory-$map 3 --script /tmp/s
        cat /proc/$BELLKEYS_PID/smaps > /out/memory-$map/smaps.txt
        stop_bellkeys memory-$map
    done
    MAP=$saved
    keyboard_out
}

test_unplug() {
    keyboard_in 1
    start_bellkeys unplug
    { note 300 67 100; echo "800 !echo snd_virmidi.0 > /sys/bus/platform/drivers/snd_virmidi/unbind"; } > /tmp/s
    probe unplug 2.5 --script /tmp/s
    stop_bellkeys unplug
    rmmod snd-virmidi
}

test_signals() {
    keyboard_in 1
    cp /bellkeys/Samples/*.wav /tmp/; sed 's|"\.\./bell-|"bell-|' $MAP > /tmp/map.json; cp /tmp/map.json /tmp/map.good
    saved=$MAP; MAP=/tmp/map.json
    start_bellkeys signals
    # SIGHUP with a broken map: reported, and the old map keeps playing (C4 at 0.3 s).
    echo '{ "keys": [ { "note": "C4", "sampel": "bell-C4.wav" } ] }' > /tmp/map.json
    kill -HUP $BELLKEYS_PID; sleep 1
    # Then a good map with C4 two octaves lower in gain: the reload takes effect (C4 at 2 s).
    sed 's/"tag": 100,/"tag": 100, "gainDecibels": -12,/' /tmp/map.good > /tmp/map.quiet
    { note 300 60 100; off 400 60; echo "800 !cp /tmp/map.quiet /tmp/map.json"; echo "900 !kill -HUP $BELLKEYS_PID";
      note 2000 60 100; off 2100 60; } > /tmp/s
    probe signals 3.5 --script /tmp/s
    # SIGTERM while a bell rings: it fades out; exit status 0 within half a second.
    note 0 67 127 > /tmp/s
    probe signals-term 1.5 --script /tmp/s &
    sleep 0.7
    stop_bellkeys signals
    wait
    MAP=$saved
    keyboard_out
}

test_record() {
    keyboard_in 1
    # As in test_program, a buffer that rides out a stalled emulated CPU: an underrun puts silence
    # into what the card plays that the take, bellkeys' own frames, does not have.
    PERIOD=512 PERIODS=4 start_bellkeys record --record /out/record/take.wav
    # Three bells, each damped (0.4 s) before the next, as in test_autoconnect.
    { note 300 60 100; off 400 60; note 900 64 110; off 1000 64; note 1500 67 90; off 1600 67; } > /tmp/s
    probe record 3.5 --script /tmp/s
    stop_bellkeys record
    # A take ended by SIGKILL (nothing can run) is still a valid WAV, up to its last second.
    start_bellkeys record-kill --record /out/record-kill/take.wav
    note 300 72 100 > /tmp/s
    probe record-kill 2.5 --script /tmp/s
    kill -KILL $BELLKEYS_PID; wait $BELLKEYS_PID
    keyboard_out
}

test_devicegone() {
    start_bellkeys devicegone
    t0=$(cut -d' ' -f1 /proc/uptime)
    # Unbinding the driver disconnects the card, as unplugging a USB sound card does.
    echo snd_aloop.0 > /sys/bus/platform/drivers/snd_aloop/unbind &
    wait $BELLKEYS_PID
    status=$?
    t1=$(cut -d' ' -f1 /proc/uptime)
    echo "exit $status after the card went away in $(echo "$t0 $t1" | awk '{printf "%d", ($2 - $1) * 1000}') ms" > /out/devicegone/exit.txt
}

test_latency() {
    keyboard_in 1
    mkdir -p /out/latency
    # Notes every 600 ms plus a step of 0.37 ms, so arrivals sample every phase of the period.
    for periodspec in "$PERIOD $PERIODS" "64 2"; do
        set -- $periodspec
        name=latency-$1x$2
        PERIOD=$1 PERIODS=$2 start_bellkeys $name
        i=0; : > /tmp/s
        while [ $i -lt 24 ]; do
            t=$(echo $i | awk '{printf "%.2f", 300 + $1 * 600.37}')
            note $t 72 127 >> /tmp/s; off $(echo $t | awk '{print $1 + 100}') 72 >> /tmp/s
            i=$((i + 1))
        done
        probe $name 15 --script /tmp/s
        stop_bellkeys $name
    done
    keyboard_out
}

# chords COUNT: the probe's script /tmp/s of 64 voices: chords of 4 ringing bells (C4 E4 G4 C5
# ring 12.6, 11.0, 9.9 and 8.3 s, 10.45 s on average), one chord every 650 ms from 200 ms on:
# 16 chords ring at once.
chords() {
    : > /tmp/s
    i=0
    while [ $i -lt $1 ]; do
        t=$((200 + i * 650))
        for n in 60 64 67 72; do note $t $n 100 >> /tmp/s; done
        i=$((i + 1))
    done
}

test_underruns() {
    keyboard_in 1
    chords 93
    for spec in "64 2" "128 2" "128 3" "256 2" "256 4" "512 4"; do
        set -- $spec
        name=underruns-$1x$2
        PERIOD=$1 PERIODS=$2 start_bellkeys $name
        probe $name 61 --script /tmp/s
        cat /proc/$BELLKEYS_PID/stat > /out/$name/stat.txt
        stop_bellkeys $name
        say "$name: $(tail -3 /out/$name/bellkeys.log | tr "\n" " ")"
    done
    keyboard_out
}

# The default buffer heals itself: 64 voices (the chords of test_underruns) for 40 s with no
# --period or --periods; the emulated CPU underruns 64 x 2 at once, and bellkeys grows the
# buffer, step by step. Then the same with an explicit --period 64 --periods 2, never changed.
test_grows() {
    keyboard_in 1
    chords 62
    # At rest first: nothing sounds and the control thread sleeps. After 3 s, bellkeys is
    # stopped for 200 ms three times (SIGSTOP, SIGCONT): the card runs dry each time, and only
    # the render thread's wake-up after an underrun lets the sleeping loop see it and grow.
    PERIOD=default start_bellkeys grows-idle
    sleep 3
    wc -l < /out/grows-idle/bellkeys.log > /out/grows-idle/mark.txt
    for i in 1 2 3; do kill -STOP $BELLKEYS_PID; usleep 200000; kill -CONT $BELLKEYS_PID; sleep 1; done
    sleep 1
    # Counted before SIGTERM, which wakes the loop too.
    wc -l < /out/grows-idle/bellkeys.log >> /out/grows-idle/mark.txt
    stop_bellkeys grows-idle
    PERIOD=default start_bellkeys grows
    probe grows 41 --script /tmp/s
    stop_bellkeys grows
    say "grows: $(grep -E 'grows|grew|gives no' /out/grows/bellkeys.log | tr "\n" " ")"
    PERIOD=64 PERIODS=2 start_bellkeys grows-explicit
    probe grows-explicit 21 --script /tmp/s
    stop_bellkeys grows-explicit
    keyboard_out
}

# Soak: SOAK seconds (kernel argument bellkeys.soak) of 2,000 MIDI events a second with the
# keyboard unplugged every 30 s, then 8 s after the last all-notes-off; resident memory every 5 s.
test_soak() {
    seconds=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^bellkeys.soak=//p')
    keyboard_in 1
    start_bellkeys soak
    ( while [ -e /proc/$BELLKEYS_PID ]; do
          echo "$(cut -d' ' -f1 /proc/uptime) $(awk '/^VmRSS/ {print $2}' /proc/$BELLKEYS_PID/status)"
          sleep 5
      done ) > /out/soak/rss.txt &
    probe soak $((${seconds:-90} + 8)) --generate 2000 --replug 30 --tail 8
    grep -E '^(VmRSS|VmHWM|Threads)' /proc/$BELLKEYS_PID/status > /out/soak/status.txt
    cat /proc/$BELLKEYS_PID/stat > /out/soak/stat.txt; cut -d' ' -f1 /proc/uptime >> /out/soak/stat.txt
    stop_bellkeys soak
    say "soak: $(cat /out/soak/probe.log | tr '\n' ' ')"
    keyboard_out
}

# (The loop's variable is named apart: the tests use t for times.)
for test_name in $(tr ' ' '\n' < /proc/cmdline | sed -n 's/^bellkeys.tests=//p' | tr ',' ' '); do
    say "=== $test_name"
    test_$test_name
    for f in /out/$test_name*/bellkeys.log; do [ -f $f ] && sed 's/^/    /' $f >&3; done
done
cat /proc/uptime > /out/uptime.txt
(cd /out && tar cf /dev/vda .)
sync
say "=== done"
poweroff -f
