import BellkeysAudio
import BellkeysControl
import BellkeysLive
import BellkeysLoading
import BellkeysMIDI
import BellkeysSystem
import BellkeysTerminal
import Glibc

// The session's start, step by step: the devices opened and the bells loaded at the rate the
// sound device grants, the recording, the start-up report, the computer keyboard. Thread: control.
extension LiveSession {
    /// What `openDevices` opened: the output, the bells at its rate, the sequencer (nil without
    /// one), the driver's own MIDI input (JACK's), and notes for the start-up report.
    struct Devices {
        var output: any AudioOutput
        var loaded: LoadedInstrument
        var sequencer: Sequencer?
        var midiInput: ((_ console: Console, _ connectsKeyboards: Bool, _ verbose: Bool) -> any LiveInput)?
        var notes: [String]
    }

    /// Opens the driver chosen (`--driver`) with the bells loaded at its rate, and the ALSA
    /// sequencer. Both are tried before giving up, so the message says everything missing; the
    /// sequencer is needed only when nothing else can play (no keyboard UI, tune, classroom or
    /// driver's MIDI input).
    static func openDevices(_ settings: LiveSettings, wantsUI: Bool) throws -> Devices {
        let opened = try OutputDrivers.open(settings.output, filter: settings.notes.filter) {
            try settings.map.load(sampleRate: $0)
        }
        var sequencerProblem: String?
        var sequencer: Sequencer?
        do { sequencer = try Sequencer(name: "bellkeys") } catch { sequencerProblem = error.description }
        let outputProblem = opened.problem
        // Without MIDI input the computer keyboard or the tune still plays; a driver may bring its own.
        let needsSequencer = !wantsUI && settings.tune == nil && opened.midiInput == nil && !settings.servesClassroom
        guard let output = opened.output, sequencer != nil || !needsSequencer else {
            let problems = [needsSequencer ? sequencerProblem : nil, outputProblem].compactMap { $0 }
            let lacking =
                sequencer == nil && needsSequencer
                ? (opened.output == nil ? "both" : "the sequencer") : "the sound device"
            let needs = needsSequencer ? "an ALSA sequencer (MIDI in) and a sound device (audio out)" : "a sound device"
            throw Failure(
                problems.joined(separator: "\n") + """

                    bellkeys plays live with \(needs); this machine lacks \(lacking).
                    What works without: `bellkeys render FILE.mid -o out.wav` renders a MIDI file \
                    with the same bells, `bellkeys demo -o demo.wav` renders the demo tune, and \
                    `bellkeys check` checks a map.
                    """)
        }
        let granted = output.configuration
        var loaded = opened.loaded
        var notes = opened.notes
        if let sequencerProblem {
            notes.append("no ALSA sequencer: " + sequencerProblem.replacingFirstLine())
        }
        if granted.sampleRate != loaded.sampleRate {
            notes.append(
                "\(granted.device) refuses \(loaded.sampleRate) Hz: bells resampled to \(granted.sampleRate) Hz at load"
            )
            loaded = try settings.map.load(sampleRate: granted.sampleRate)
        }
        return Devices(
            output: output, loaded: loaded, sequencer: sequencer, midiInput: opened.midiInput, notes: notes)
    }

    /// `--record PATH`: the recorder, in the device's rate, channels and format (not started).
    static func openRecorder(_ path: String?, _ granted: OutputConfiguration) throws -> Recorder? {
        guard let path else { return nil }
        do {
            return try Recorder(
                path: path, sampleRate: granted.sampleRate, channels: granted.channels, format: granted.format)
        } catch {
            throw Failure(error.description)
        }
    }

    /// The start-up report: what was loaded, the settings, the transposition, the `notes` on
    /// the devices, the output's own lines, the memory lock, the recording.
    static func startupLines(
        _ loaded: LoadedInstrument, transpose: Int, notes: [String], output: any AudioOutput,
        scheduling: RealTimeScheduling, lockError: Int32?, recorder: Recorder?
    ) -> [String] {
        var lines = [
            "bellkeys: \(loaded.contentsText) from \(loaded.path), "
                + (loaded.presetDescription.map { "\($0), " } ?? "")
                + "loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms",
            "  " + settingsReport.summary,
        ]
        if transpose != 0 {
            lines.append("  MIDI keyboards and files transposed \(transpositionWords(transpose)) (keyswitches not)")
        }
        lines += notes.map { "  " + $0 }
        lines += output.startupLines(scheduling: scheduling)
        if let lockError {
            lines.append(
                "  notice: sample memory not locked (\(String(cString: strerror(lockError)))); it may be paged out.\n"
                    + "    fix: raise the memlock limit (`@audio - memlock unlimited` in /etc/security/limits.d/audio.conf)"
            )
        } else {
            lines.append("  memory locked (\(loaded.bank.byteCount / 1024) KiB of samples)")
        }
        if let recorder {
            lines.append(
                "  recording to \(recorder.path) (\(output.configuration.format.rawValue), as played)")
        }
        return lines
    }

    /// The computer keyboard and the piano picture on the terminal, with the keys' line of the
    /// report; nil (and a notice) when the terminal cannot be taken over.
    static func openKeyboard(_ settings: LiveSettings, playable: ClosedRange<Int>?, console: Console)
        -> KeyboardInput?
    {
        let terminal: Terminal
        do {
            terminal = try Terminal()
        } catch {
            console.line("  notice: no keyboard UI (\(error))")
            return nil
        }
        let lowestNote = TerminalKeyboard.lowestNote(for: playable)
        console.columns = terminal.columns
        console.line(
            "  computer keyboard: a w s e d f t g y h u j k play "
                + PianoPicture.rangeText(TerminalKeyboard.notes(lowest: lowestNote)) + ", ←/→ an octave down/up")
        return KeyboardInput(
            terminal: terminal, console: console, channel: UInt8((settings.notes.channel ?? 1) - 1),
            lowestNote: lowestNote, clock: monotonicInstant)
    }
}
