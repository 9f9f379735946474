import ArgumentParser
import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import Glibc

struct Play: ParsableCommand, LiveCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play the bells live from MIDI keyboards (the default command).",
        discussion: """
            bellkeys opens an ALSA sequencer client named `bellkeys` with one input port and \
            connects every keyboard it finds, and every keyboard plugged in later, unless \
            --connect names the ones to use. Notes start a constant --period after they arrive, \
            plus the device's buffer. Ctrl-C or SIGTERM fades out and exits; SIGHUP reloads the \
            map (a map with errors is reported and the old one keeps playing). The program ends \
            with status 1 when the sound device goes away, so a service manager can restart it.

            On a terminal (unless --no-ui) the computer keyboard plays too, and the instrument's \
            keys are drawn lit while they sound (two octaves of them when they do not fit the \
            width; ◀ or ▶ beside the picture when a note sounds beyond it): a w s e d f t g y h u \
            j k = an octave from C (C4..C5 for the bells), ←/→ (or </>) move it an octave down/up, \
            space pedal, x damps all, r changes the room (off, room, hall, church), p the set (a map \
            of several sets), ↑/↓ volume, Enter records and closes a phrase loop, Backspace \
            clears it, Esc, Ctrl-C or Ctrl-D quits. \
            Without key releases (most terminals) struck bells ring out; terminals with the kitty \
            keyboard protocol damp keys on release. See docs/classroom.md.
            """)

    @OptionGroup var mapOptions: MapOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(
        help: ArgumentHelp(
            "Connect only this MIDI port (repeatable; turns auto-connect off): client:port, a client number, a client name, or part of a port name (default: every keyboard, now and when plugged in).",
            discussion: "A port that is not there yet is connected when it appears.",
            valueName: "port"))
    var connect: [String] = []

    @OptionGroup var noteOptions: NoteOptions
    @OptionGroup var voiceOptions: VoiceOptions
    @OptionGroup var sessionOptions: SessionOptions
    @OptionGroup(title: "Classroom: phones as handbells") var classroomOptions: ClassroomOptions

    @Flag(name: .shortAndLong, help: "Print each MIDI event received, like aseqdump.")
    var verbose = false

    @OptionGroup var settingsOptions: SettingsOptions

    func run() throws {
        try reporting {
            let session = try LiveSession(settings: liveSettings)
            let status = session.run()
            Glibc.exit(status)
        }
    }

    /// What `play` starts its session with: every option as parsed.
    var liveSettings: LiveSettings {
        LiveSettings(
            map: mapOptions, output: outputOptions, voices: voiceOptions, session: sessionOptions, notes: noteOptions,
            connect: connect, verbose: verbose, tune: nil, classroom: classroomOptions)
    }
}
