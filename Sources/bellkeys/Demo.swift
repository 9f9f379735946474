import ArgumentParser
import BellkeysEngine
import BellkeysFormats
import Glibc

struct Demo: ParsableCommand, LiveCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play the demo tune, the Westminster Quarters, on the bells (or render it with -o).",
        discussion: """
            The full hour of the Westminster Quarters in F (changes 2, 3, 4 and 5, within C4..C5), \
            then three strikes of the hour on C4: 22.6 s with the ring-out, 25.6 s with the bundled \
            map's hall. It plays live on the \
            sound device, with the piano drawn and the keys lit as the bells sound; MIDI keyboards \
            and the computer keyboard can play along, and Ctrl-C stops it. With -o it is rendered \
            to a WAV file instead, on any machine: no sound card needed, the same bytes every time. \
            demo.mid beside the bundled bells holds the same tune (/usr/share/bellkeys/demo.mid \
            when installed, Samples/demo.mid in a checkout).
            """)

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Render to this WAV file instead of playing (no sound card needed).",
            valueName: "out.wav"))
    var output: String?

    @Option(
        help: ArgumentHelp("With -o: sample format s16, s24, s32 (integer PCM) or f32 (float).", valueName: "format"))
    var format: String = "s16"

    @OptionGroup var mapOptions: MapOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var noteOptions: NoteOptions
    @OptionGroup var voiceOptions: VoiceOptions
    @OptionGroup var sessionOptions: SessionOptions

    func validate() throws {
        try validateFormat(format)
        if output != nil, sessionOptions.record != nil {
            throw ValidationError("--record records live playing; with -o the demo is already written to a file")
        }
    }

    func run() throws {
        try reporting {
            if let output {
                let tune = westminsterQuarters()
                let loaded = try mapOptions.load(sampleRate: outputOptions.rate)
                try renderToWAV(
                    tune, named: "the demo tune", loaded: loaded, voiceOptions: voiceOptions,
                    noteOptions: noteOptions, output: output,
                    format: OutputSampleFormat(rawValue: format)!, channels: outputOptions.channels,
                    quiet: sessionOptions.quiet)
                return
            }
            let session = try LiveSession(settings: liveSettings)
            Glibc.exit(session.run())
        }
    }

    /// What the live demo starts its session with: the options parsed, the tune, no MIDI port to
    /// choose, no classroom.
    var liveSettings: LiveSettings {
        LiveSettings(
            map: mapOptions, output: outputOptions, voices: voiceOptions, session: sessionOptions, notes: noteOptions,
            connect: [], verbose: false, tune: westminsterQuarters(), classroom: nil)
    }
}
