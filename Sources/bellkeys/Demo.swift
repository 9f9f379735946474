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
            to a sound file instead (WAV, FLAC, Ogg Vorbis or MP3, by the name's extension), on any machine: no sound card needed; a WAV or FLAC file is the same bytes every time. \
            demo.mid beside the bundled bells holds the same tune (/usr/share/bellkeys/demo.mid \
            when installed, Samples/demo.mid in a checkout).
            """)

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Render to this sound file instead of playing (no sound card needed): WAV (.wav), FLAC (.flac), Ogg Vorbis (.ogg) or MP3 (.mp3), by its extension.",
            valueName: "out.wav"))
    var output: String?

    @Option(
        help: ArgumentHelp(
            "With -o: the sample format of a WAV file: s16, s24, s32 (integer PCM) or f32 (float); of a FLAC file: s16 or s24 (default: s16). An Ogg Vorbis or MP3 file takes none.",
            valueName: "format"))
    var format: String?

    @OptionGroup var mapOptions: MapOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var noteOptions: NoteOptions
    @OptionGroup var voiceOptions: VoiceOptions
    @OptionGroup var sessionOptions: SessionOptions
    @OptionGroup var settingsOptions: SettingsOptions

    func validate() throws {
        if let output {
            _ = try outputFile(output, format: format, channels: outputOptions.channels)
        } else if format != nil {
            throw ValidationError(
                "--format sets the sample format of the file -o writes; give -o FILE, or drop --format")
        }
        if output != nil, sessionOptions.record != nil {
            throw ValidationError("--record records live playing; with -o the demo is already written to a file")
        }
    }

    func run() throws {
        try reporting {
            if let output {
                let tune = westminsterQuarters()
                let loaded = try mapOptions.load(
                    sampleRate: outputOptions.rate, printsWarnings: !sessionOptions.quiet)
                let file = try outputFile(output, format: format, channels: outputOptions.channels)
                try renderToFile(
                    tune, named: "the demo tune", loaded: loaded, voiceOptions: voiceOptions,
                    noteOptions: noteOptions, output: output, kind: file.kind,
                    format: file.format, channels: outputOptions.channels, quiet: sessionOptions.quiet,
                    transposable: false)
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
