import ArgumentParser
import BellkeysAudio
import BellkeysFormats

/// How bellkeys reaches the sound: `--driver`.
enum Driver: String, ExpressibleByArgument, CaseIterable {
    /// JACK when a JACK server is running (and no ALSA-only option is given), else ALSA.
    case auto
    case alsa
    case jack
}

/// The sound output and its real-time side, shared by the commands that play live.
struct OutputOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Sound driver: auto, alsa or jack.",
            discussion:
                "auto (the default) plays through JACK when a JACK server is running (jackd, or PipeWire's under pw-jack) and no ALSA-only option (--device, --rate, --period, --periods, --priority) is given, else through ALSA; with --jack-connect it needs JACK. bellkeys never starts a JACK server and never changes its rate or buffer size.",
            valueName: "driver"))
    var driver: Driver = .auto

    @Option(
        help: ArgumentHelp("ALSA playback device, as `bellkeys list` names it (default: default).", valueName: "name"))
    var device: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "ALSA output rate in Hz, 8000 to 384000 (default: the samples' rate, 48000 for the bundled bells).",
            discussion:
                "A device that refuses it gets its nearest rate, and the bells are resampled to that once, at load. With JACK the server's rate is used.",
            valueName: "hz"))
    var rate: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "ALSA frames per period, 16 to 8192: how often the render thread writes to the device (default: 64).",
            discussion:
                "64 frames is 1.3 ms at 48 kHz. Without --period and --periods the buffer starts at 64 × 2 and grows by itself after 3 underruns within 10 s (a longer period, then more periods, at most 512 × 4); given either, it stays as given. With JACK the server's buffer size is used (jack_bufsize).",
            valueName: "frames"))
    var period: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "ALSA periods in the device buffer, 2 to 32; the buffer latency is period × periods (default: 2).",
            discussion: "2 × 64 frames is 2.7 ms at 48 kHz, where the buffer starts; see --period for how it grows.",
            valueName: "n"))
    var periods: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Output channels, 1 to 8: 1 is the mono mix; with 2 or more the first is the left and the second the right (the same while no bell is panned and no reverb is on), the others the mono mix. With JACK, one output port each.",
            valueName: "n"))
    var channels = 2

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Real-time priority (SCHED_FIFO) of the ALSA render thread, 1 to 99 (default: 70). With JACK the server sets it.",
            valueName: "n"))
    var priority: Int32?

    @Option(
        name: .customLong("jack-connect"),
        help: ArgumentHelp(
            "With JACK: connect the output ports to this port (repeatable, in order: out_1 to the first), or to this client's inputs; `none` connects nothing (default: the physical playback ports).",
            valueName: "port"))
    var jackConnect: [String] = []

    var deviceName: String { device ?? "default" }
    var periodFrames: Int { period ?? 64 }
    var periodCount: Int { periods ?? 2 }
    var realTimePriority: Int32 { priority ?? 70 }

    /// The ALSA-only options given, as typed.
    var alsaOnlyOptions: [String] {
        [
            device.map { _ in "--device" }, rate.map { _ in "--rate" }, period.map { _ in "--period" },
            periods.map { _ in "--periods" }, priority.map { _ in "--priority" },
        ].compactMap { $0 }
    }

    /// Where the JACK output ports go.
    var jackConnection: JACKConnection {
        if jackConnect.isEmpty { return .physical }
        if jackConnect == ["none"] { return .none }
        return .ports(jackConnect)
    }

    func validate() throws {
        try validateRate(rate)
        if let period, !(16...8192).contains(period) {
            throw ValidationError("--period \(period) is out of range; use 16 to 8192 frames")
        }
        if let periods, !(2...32).contains(periods) {
            throw ValidationError("--periods \(periods) is out of range; use 2 to 32")
        }
        try validateChannels(channels)
        if let priority, !(1...99).contains(priority) {
            throw ValidationError("--priority \(priority) is out of range; use 1 to 99")
        }
        if driver == .jack, let option = alsaOnlyOptions.first {
            throw ValidationError(
                "\(option) is an ALSA option; with --driver jack the JACK server sets the device, rate, buffer size and "
                    + "priority (change them there: jack_bufsize 128, qjackctl), and bellkeys follows them. "
                    + "Drop \(option), or play through ALSA: --driver alsa")
        }
        if !jackConnect.isEmpty, driver == .alsa {
            throw ValidationError("--jack-connect is a JACK option; drop it, or use --driver jack")
        }
        if !jackConnect.isEmpty, let option = alsaOnlyOptions.first {
            throw ValidationError("--jack-connect asks for JACK and \(option) for ALSA; drop one of them")
        }
        if jackConnect.contains("none"), jackConnect.count > 1 {
            throw ValidationError("--jack-connect none connects nothing; give it alone, or name ports instead")
        }
    }
}

/// The screen, the computer keyboard and recording, shared by `play` and `demo`.
struct SessionOptions: ParsableArguments {
    @Flag(
        name: .customLong("no-ui"),
        help: ArgumentHelp(
            "No keyboard UI: the computer keyboard does not play and no piano is drawn (for services).",
            discussion: "The UI is also off when standard input or output is not a terminal."))
    var noUI = false

    @Option(
        help: ArgumentHelp(
            "Record what is played to this WAV file (in the device's format, bit for bit); an existing file is not replaced.",
            discussion:
                "The file is valid at any moment (its header is rewritten every second), and complete after Ctrl-C, SIGTERM or a device error.",
            valueName: "file.wav"))
    var record: String?

    @Flag(name: .shortAndLong, help: "No live status (the start-up report and connection changes are still printed).")
    var quiet = false
}

/// A command that plays live (`play`, `demo`): the one place its session's settings are made.
protocol LiveCommand: ParsableCommand {
    /// The settings from the options as parsed (CommandLineTests checks every field was).
    var liveSettings: LiveSettings { get }
}

/// Everything a `LiveSession` is started with: the option groups exactly as the command parsed
/// them (one initializer, every field given: an option group made by `init()` rather than parsed
/// makes swift-argument-parser stop the program when it is read).
struct LiveSettings {
    let map: MapOptions
    let output: OutputOptions
    let voices: VoiceOptions
    let session: SessionOptions
    let notes: NoteOptions
    /// `--connect` (`play`); empty: every keyboard.
    let connect: [String]
    /// `--verbose` (`play`).
    let verbose: Bool
    /// A tune to play (`bellkeys demo`); the session ends when it has rung out.
    let tune: MIDIFile?
    /// `--web` and its options (`play`); nil for a command without them.
    let classroom: ClassroomOptions?

    init(
        map: MapOptions, output: OutputOptions, voices: VoiceOptions, session: SessionOptions, notes: NoteOptions,
        connect: [String], verbose: Bool, tune: MIDIFile?, classroom: ClassroomOptions?
    ) {
        self.map = map
        self.output = output
        self.voices = voices
        self.session = session
        self.notes = notes
        self.connect = connect
        self.verbose = verbose
        self.tune = tune
        self.classroom = classroom
    }

    /// Whether the classroom is served (`--web`).
    var servesClassroom: Bool { classroom?.web ?? false }
}
