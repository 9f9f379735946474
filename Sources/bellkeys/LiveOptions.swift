import ArgumentParser
import BellkeysFormats

/// The sound device and the render thread, shared by the commands that play live.
struct OutputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("ALSA playback device (see `bellkeys list`).", valueName: "name"))
    var device = "default"

    @Option(help: ArgumentHelp("Output rate in Hz (default: the samples' rate, 48000 for the bundled bells).",
                               discussion: "A device that refuses it gets its nearest rate, and the bells are resampled to that once, at load.",
                               valueName: "hz"))
    var rate: Int?

    @Option(help: ArgumentHelp("Frames per period: how often the render thread writes to the device.",
                               discussion: "64 frames is 1.3 ms at 48 kHz. Raise it (128, 256) if `underruns` rises.",
                               valueName: "frames"))
    var period = 64

    @Option(help: ArgumentHelp("Periods in the device buffer; the buffer latency is period × periods.",
                               discussion: "2 × 64 frames is 2.7 ms at 48 kHz. Use 3 if the card underruns with 2.",
                               valueName: "n"))
    var periods = 2

    @Option(help: ArgumentHelp("Output channels: 1 is the mono mix; with 2 or more the first is the left and the second the right (the same while no bell is panned), the others the mono mix.", valueName: "n"))
    var channels = 2

    @Option(help: ArgumentHelp("Real-time priority (SCHED_FIFO, 1 to 99) of the render thread.", valueName: "n"))
    var priority: Int32 = 70

    func validate() throws {
        try validateRate(rate)
        if !(16...8192).contains(period) { throw ValidationError("--period \(period) is out of range; use 16 to 8192 frames") }
        if !(2...32).contains(periods) { throw ValidationError("--periods \(periods) is out of range; use 2 to 32") }
        try validateChannels(channels)
        if !(1...99).contains(priority) { throw ValidationError("--priority \(priority) is out of range; use 1 to 99") }
    }
}

/// The screen, the computer keyboard and recording, shared by `play` and `demo`.
struct SessionOptions: ParsableArguments {
    @Flag(name: .customLong("no-ui"),
          help: ArgumentHelp("No keyboard UI: the computer keyboard does not play and no piano is drawn (for services).",
                             discussion: "The UI is also off when standard input or output is not a terminal."))
    var noUI = false

    @Option(help: ArgumentHelp("Record what is played to this WAV file (in the device's format, bit for bit); an existing file is not replaced.",
                               discussion: "The file is valid at any moment (its header is rewritten every second), and complete after Ctrl-C, SIGTERM or a device error.",
                               valueName: "file.wav"))
    var record: String?

    @Flag(name: .shortAndLong, help: "No live status (the start-up report and connection changes are still printed).")
    var quiet = false
}

/// Everything a `LiveSession` is started with.
struct LiveSettings {
    var map: MapOptions
    var output: OutputOptions
    var voices: VoiceOptions
    var session: SessionOptions
    var connect: [String] = []
    var channel: Int?
    var verbose = false
    /// A tune to play (`bellkeys demo`); the session ends when it has rung out.
    var tune: MIDIFile?
}
