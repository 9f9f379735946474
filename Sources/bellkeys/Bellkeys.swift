import ArgumentParser
import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import Glibc

@main
struct Bellkeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bellkeys",
        abstract:
            "Church bells and handbells from a MIDI keyboard, the computer keyboard or a classroom of phones: the bundled bells, a map, an SFZ instrument or a SoundFont preset.",
        discussion: """
            Without --map, bellkeys plays its bundled bells: /usr/share/bellkeys/tags.json when \
            installed (found beside the executable, as ../share/bellkeys/tags.json), or Samples/tags.json \
            in the checkout it was built from. Set BELLKEYS_SAMPLES to use another folder's tags.json \
            as the default. The map format: man 5 bellkeys-map, or docs/map.md. play, demo, \
            render and check first read the settings files /etc/bellkeys/bellkeys.conf and \
            $XDG_CONFIG_HOME/bellkeys/bellkeys.conf (~/.config/bellkeys/bellkeys.conf): one option \
            per line, as typed, before the command line's; --no-config reads neither (docs/settings.md). \
            On an x86-64 CPU \
            with AVX2 (x86-64-v3) the bells are mixed by a loop built for it, the same samples \
            faster; BELLKEYS_MIX=portable uses the loop every x86-64 CPU runs.
            """,
        version: "bellkeys \(bellkeysVersion)",
        subcommands: [Play.self, Demo.self, Render.self, Check.self, List.self],
        defaultSubcommand: Play.self)

    /// Reads the settings files (`argumentsWithSettings`), then parses and runs the command as
    /// swift-argument-parser's `main` does; a usage error that may come from a settings file
    /// says which lines.
    static func main() {
        let arguments: [String]
        do {
            (arguments, settingsReport) = try argumentsWithSettings(Array(CommandLine.arguments.dropFirst()))
        } catch {
            fail(error.description)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success || settingsReport.used.isEmpty || message(for: error).isEmpty {
                exit(withError: error)
            }
            var text = fullMessage(for: error)
            while text.last == "\n" { text.removeLast() }
            printError(text)
            printError(settingsHint(for: message(for: error)))
            Glibc.exit(code.rawValue)
        }
    }
}

/// The settings-file lines an error message may come from, and how to leave them out.
func settingsHint(for message: String) -> String {
    let origins = settingsReport.origins(of: message)
    let files = settingsReport.files.map(\.shownPath).joined(separator: " and ")
    return (origins.isEmpty ? "  (with the settings of \(files))" : "  (" + origins.joined(separator: "; ") + ")")
        + "\n    bellkeys check lists the settings; --no-config leaves them out"
}

/// Options shared by every command that loads an instrument.
struct MapOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The map file (JSON) that names the bells, an SFZ instrument (a file ending in .sfz) or a SoundFont (.sf2 or .sf3) (default: the bundled tags.json).",
            discussion:
                "The bundled tags.json is /usr/share/bellkeys/tags.json when installed, Samples/tags.json in a checkout.",
            valueName: "file"))
    var map: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "With a SoundFont (.sf2 or .sf3) as --map: the preset, by its program, 0 to 127 as sent on the wire, one less than General MIDI's numbering, or by its name (case-insensitive; a beginning only one preset has will do) (default: the whole font, each channel's program changes choosing its preset, or the map's program).",
            valueName: "n|name"))
    var program: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "With a SoundFont as --map: the preset's bank, 0 to 16383 (128: FluidSynth's drum kits) (default: 0 with --program, else the whole font, or the map's bank).",
            valueName: "n"))
    var bank: Int?

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "With a map of several sets: the set every channel starts on, by its name (default: the map's first set, or the channels the map gives each set).",
            valueName: "name"))
    var startingSet: String?

    func validate() throws {
        if let program, let number = Int(program), !MapFile.programRange.contains(number) {
            throw ValidationError("--program \(program) is out of range; use 0 to 127, or a preset's name")
        }
        if let program, program.allSatisfy(\.isWhitespace) {
            throw ValidationError("--program is empty; give a program number, 0 to 127, or a preset's name")
        }
        if let bank, !MapFile.bankRange.contains(bank) {
            throw ValidationError("--bank \(bank) is out of range; use 0 to 16383")
        }
        if program != nil || bank != nil, let map, map.lowercased().hasSuffix(".sfz") {
            throw ValidationError("--program and --bank choose a SoundFont's preset; \(map) is an SFZ instrument")
        }
    }

    /// The preset that --program (a number or a name) and --bank choose (nil: neither given).
    var preset: PresetChoice? {
        if let program, Int(program) == nil { return PresetChoice(name: program, bank: bank) }
        return program == nil && bank == nil
            ? nil : PresetChoice(bank: bank ?? 0, program: program.flatMap { Int($0) } ?? 0)
    }

    /// The instrument file to load: `--map`'s (a JSON map, an SFZ file or a SoundFont), else
    /// the bundled bells' map.
    func instrumentPath() throws -> String {
        if let map { return map }
        if let problem = samplesFolderProblem() { throw Failure(problem) }
        guard let found = findDefaultMap() else {
            throw Failure(
                "cannot find the bundled map; looked at:\n    " + defaultMapCandidates().joined(separator: "\n    ")
                    + "\n    fix: pass --map FILE, or set BELLKEYS_SAMPLES to the folder that holds tags.json")
        }
        return found
    }

    /// Loads the map; what it asks for that bellkeys does not play goes to standard error
    /// (unless `printsWarnings` is false: `check` lists it in its report).
    func load(sampleRate: Int?, printsWarnings: Bool = true) throws -> LoadedInstrument {
        let path = try instrumentPath()
        let loaded: LoadedInstrument
        do {
            loaded = try loadInstrument(path: path, sampleRate: sampleRate, preset: preset)
        } catch {
            throw Failure(error.description)
        }
        if printsWarnings { for warning in loaded.warnings { printError("bellkeys: \(warning)") } }
        if let startingSet {
            if loaded.sets.isEmpty {
                throw Failure(
                    "--set \(startingSet): \(path) is a map of one instrument, not of sets\n    fix: leave --set out, or give a map with \"sets\""
                )
            }
            guard let index = loaded.setIndex(named: startingSet) else {
                let names = loaded.sets.map { "\"\($0.name)\"" }.joined(separator: ", ")
                throw Failure("--set \(startingSet): \(path) has no set of that name\n    fix: use one of \(names)")
            }
            var chosen = loaded
            chosen.startingSet = index
            return chosen
        }
        return loaded
    }
}

/// Polyphony and master volume, shared by the commands that play.
struct VoiceOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Voices that sound at once before the oldest is stolen, 1 to 65536 (default: the map's, 128 if it says none).",
            valueName: "n"))
    var polyphony: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Master volume in dB, -60 to 12, in place of the map's masterVolumeDecibels (default: the map's, 0 if it says none).",
            valueName: "db"))
    var volume: Double?

    @Option(
        help: ArgumentHelp(
            "The room the bells ring in: off, room, hall or church, in place of the map's reverb (default: the map's, off if it says none; the bundled map's is hall).",
            discussion:
                "The reverb's level is the map's reverbMix (0.3 if it says none); MIDI CC91 sets each channel's send.",
            valueName: "preset"))
    var reverb: ReverbPreset?

    @Option(
        help: ArgumentHelp(
            "How transposed samples are interpolated: fast (8 taps), good (16) or best (32), in place of the map's quality (default: the map's, good if it says none).",
            discussion:
                "Only instruments that play samples away from their own pitch (SFZ files) use it; a sample at its own pitch is played exactly at every level.",
            valueName: "level"))
    var quality: InterpolationQuality?

    func validate() throws {
        if let polyphony, !MapFile.polyphonyRange.contains(polyphony) {
            throw ValidationError("--polyphony \(polyphony) is out of range; use 1 to 65536")
        }
        if let volume, !Instrument.volumeRange.contains(volume) {
            throw ValidationError("--volume \(volume) is out of range; use -60 to 12 (dB)")
        }
    }

    /// An engine for `loaded`, with these options in place of the map's polyphony and master
    /// volume, `notes`' --unmapped and --transpose in place of its unmappedNotes and transpose,
    /// and `room` (the room
    /// chosen live), else `--reverb`, in place of its reverb.
    /// `maxBlockFrames`: the engine's largest block, if not the live default. A map of sets:
    /// the options apply to every set (`--volume` is channel 1's starting set's, the others keep
    /// their levels against it).
    func makeEngine(
        _ loaded: LoadedInstrument, notes: NoteOptions, room: ReverbPreset? = nil,
        maxBlockFrames: Int? = nil, roomsToChoose: Bool = false
    ) -> Engine {
        var sets = loaded.instrumentSets
        let shift = volume.map { $0 - sets.sets[sets.startingSets[0]].instrument.masterVolumeDecibels } ?? 0
        for k in sets.sets.indices {
            sets.sets[k].instrument.masterVolumeDecibels += shift
            if let unmapped = notes.unmapped { sets.sets[k].instrument.unmappedNotes = unmapped }
            if let preset = room ?? reverb {
                sets.sets[k].instrument.reverb = sets.sets[k].instrument.reverb.inRoom(preset)
            }
        }
        var configuration = EngineConfiguration(
            sampleRate: loaded.sampleRate, polyphony: polyphony ?? loaded.map.polyphony)
        configuration.wideMixing = wideMixingAvailable()
        configuration.interpolation = quality ?? loaded.map.quality ?? .standard
        if let maxBlockFrames { configuration.maxBlockFrames = maxBlockFrames }
        configuration.roomsToChoose = roomsToChoose
        configuration.transpose = notes.transpose ?? loaded.map.transpose
        return Engine(bank: loaded.bank, sets: sets, configuration: configuration)
    }
}

/// Checks an optional `--rate` (Hz), shared by the commands that take one.
func validateRate(_ rate: Int?) throws {
    if let rate, !(8_000...384_000).contains(rate) {
        throw ValidationError("--rate \(rate) is out of range; use 8000 to 384000 Hz")
    }
}

/// The help of `--format`, shared by the commands that write sound files.
let formatHelp = ArgumentHelp(
    "Sample format of a WAV file: s16, s24, s32 (integer PCM) or f32 (float); of a FLAC file: s16 or s24 (default: s16). An Ogg Vorbis or MP3 file takes none.",
    valueName: "format")

/// What `-o FILE` writes, checked before any work: the kind its extension names (.wav, .flac,
/// .ogg or .mp3) and the sample format (`--format`, else s16; none for the lossy kinds), or a
/// usage error that lists what is possible. Shared by `render` and `demo -o`.
func outputFile(_ path: String, format: String?, channels: Int) throws -> (
    kind: OutputFileKind, format: OutputSampleFormat
) {
    guard let kind = OutputFileKind(path: path) else {
        throw ValidationError(
            "-o \(path): bellkeys writes WAV (.wav), FLAC (.flac), Ogg Vorbis (.ogg) and MP3 (.mp3) files, "
                + "chosen by the name's extension; give the file one of those")
    }
    guard kind.isBuiltIn else {
        throw ValidationError(
            "-o \(path): this system's libsndfile (\(sndfileVersion)) does not write \(kind.displayName) files; "
                + "write a .wav or .flac file instead")
    }
    guard channels <= kind.maximumChannels, kind.isWritable(channelCount: channels) else {
        throw ValidationError(
            "-o \(path): an \(kind.displayName) file holds at most \(kind.maximumChannels) channels; "
                + "give --channels \(kind.maximumChannels) or fewer, or write a .wav or .flac file")
    }
    guard let format else { return (kind, .s16) }
    guard let sampleFormat = OutputSampleFormat(rawValue: format) else {
        throw ValidationError("--format \(format) is not one of s16, s24, s32, f32")
    }
    if kind.sampleFormats.isEmpty {
        throw ValidationError(
            "--format sets the samples of a WAV or FLAC file; an \(kind.displayName) file is encoded from the mix as it is: drop --format"
        )
    }
    if !kind.sampleFormats.contains(sampleFormat) {
        throw ValidationError(
            "--format \(format): a \(kind.displayName) file holds "
                + kind.sampleFormats.map(\.rawValue).joined(separator: " or ") + "; for \(format) write a .wav file")
    }
    return (kind, sampleFormat)
}

/// Checks `--channels`, shared by the commands that write audio.
func validateChannels(_ channels: Int) throws {
    if !(1...8).contains(channels) { throw ValidationError("--channels \(channels) is out of range; use 1 to 8") }
}

/// An error already worded for the user: printed as is, exit status 1.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func fail(_ message: String) -> Never {
    printError("bellkeys: error: \(message)")
    if !settingsReport.origins(of: message).isEmpty { printError(settingsHint(for: message)) }
    exit(1)
}

/// Writes a line to standard error (file descriptor 2).
func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
}

extension ParsableCommand {
    /// Runs `body`, turning a `Failure` into a message on standard error and exit status 1.
    func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as Failure {
            fail(failure.description)
        }
    }
}

extension ReverbPreset: ExpressibleByArgument {}
extension InterpolationQuality: ExpressibleByArgument {}
