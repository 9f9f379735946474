import ArgumentParser
import BellkeysAudio
import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysSystem

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render a Standard MIDI File to a sound file with the bells (no sound card needed).",
        discussion: """
            Formats 0, 1 and 2 (a format 2 file's tracks play one after the other), tempo \
            changes, running status, any ticks-per-quarter division and SMPTE division. A note at \
            time t starts at output frame round(t × rate) exactly. Rendering goes on after the \
            file's end until every bell has rung out. The same input gives the same bytes. The \
            file is written as OUT.wav.partial and renamed when done, so an existing OUT.wav \
            survives a failed render.

            Notes outside the map's keys are left out, unless the map folds them (the bundled \
            bells do: every note rings the bell of its name) or --unmapped fold does; a warning \
            on standard error says how many were left out. \
            A file cut short inside its last End-of-Track event is played with a warning; any \
            other damage is an error that names the byte. The file's extension chooses what is \
            written: .wav (WAV; --format s16, s24, s32 or f32), .flac (FLAC; s16 or s24), .ogg \
            (Ogg Vorbis) or .mp3 (MP3); any other is refused. Exit status: 0 when the file is \
            written and bells sound in it; 3 when it is written but no note struck a bell (none \
            has a bell in the map, all are left out by --channel or --skip-drums, or there are none); 1 on an error (no \
            file written, an existing one kept); 64 on a usage error.
            """)

    @Argument(help: ArgumentHelp("The MIDI file to render (.mid).", valueName: "in.mid"))
    var input: String

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The sound file to write: WAV (.wav), FLAC (.flac), Ogg Vorbis (.ogg) or MP3 (.mp3), by its extension.",
            valueName: "out.wav"))
    var output: String

    @OptionGroup var mapOptions: MapOptions
    @OptionGroup var noteOptions: NoteOptions

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Output rate in Hz, 8000 to 384000 (default: the samples' rate, 48000 for the bundled bells).",
            discussion: "Samples at another rate are resampled once at load (libsamplerate).",
            valueName: "hz"))
    var rate: Int?

    @Option(help: formatHelp)
    var format: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Output channels, 1 to 8: 1 is the mono mix; with 2 or more the first is the left and the second the right (the same while no bell is panned and no reverb is on), the others the mono mix.",
            valueName: "n"))
    var channels: Int = 2

    @OptionGroup var voiceOptions: VoiceOptions

    @Option(
        name: .customLong("block"), parsing: .unconditional,
        help: ArgumentHelp(
            "Frames the engine mixes at most at once, 16 to 8192.",
            discussion:
                "The notes land on the same frames whatever the block; only the last bits of ramps and sums move with it. 64 renders bit for bit what the live engine plays (the JACK tests compare a live recording with such a render).",
            valueName: "frames"))
    var blockFrames = 1_024

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @OptionGroup var settingsOptions: SettingsOptions

    func validate() throws {
        if !(16...8192).contains(blockFrames) {
            throw ValidationError("--block \(blockFrames) is out of range; use 16 to 8192 frames")
        }
        try validateRate(rate)
        try validateChannels(channels)
        _ = try outputFile(output, format: format, channels: channels)
    }

    func run() throws {
        try reporting {
            let midiBytes: [UInt8]
            let midi: MIDIFile
            do {
                midiBytes = try readFile(input, what: "MIDI file")
                midi = try parseMIDIFile(midiBytes, file: input)
            } catch let error as FileError {
                throw Failure(error.description)
            } catch let error as MIDIFileError {
                throw Failure(error.description)
            }
            let loaded = try mapOptions.load(sampleRate: rate, printsWarnings: !quiet)
            let file = try outputFile(output, format: format, channels: channels)
            try renderToFile(
                midi, named: input, loaded: loaded, voiceOptions: voiceOptions,
                noteOptions: noteOptions, output: output, kind: file.kind,
                format: file.format, channels: channels, blockFrames: blockFrames, quiet: quiet)
        }
    }
}

/// Renders `midi` with the bells of `loaded` into the sound file `output` (of `kind`), and
/// reports it, with warnings on standard error (unless `quiet`: then errors only, and the
/// warning that explains exit status 3). Shared by
/// `render` and `demo -o`. Exits with status 3 when the file is written but no note struck a bell.
/// `transposable`: --transpose moves the file's notes (false for the demo's own tune).
func renderToFile(
    _ midi: MIDIFile, named input: String, loaded: LoadedInstrument, voiceOptions: VoiceOptions,
    noteOptions: NoteOptions, output: String, kind: OutputFileKind, format sampleFormat: OutputSampleFormat,
    channels: Int, blockFrames: Int = 1_024, quiet: Bool, transposable: Bool = true
) throws {
    if !quiet { for warning in midi.warnings { printError("bellkeys: warning: \(warning)") } }
    // Offline there is no latency to keep low: long blocks amortise per-voice work.
    // Events still take effect at their exact frames.
    let engine = voiceOptions.makeEngine(loaded, notes: noteOptions, maxBlockFrames: blockFrames)

    let schedule = midi.scheduled(sampleRate: loaded.sampleRate, transposable: transposable)
    let allEvents = schedule.events
    let events = noteOptions.filter.apply(allEvents)
    // A WAV file holds at most 4 GiB of audio; say so before rendering, not after.
    let longestSample = loaded.bank.frameCounts.max() ?? 0
    let maximumBytes = (Int(schedule.endFrame) + longestSample) * channels * sampleFormat.byteCount
    if kind == .wav, maximumBytes >= (1 << 32) - 1024 {
        throw Failure(
            "\(output): the render would pass the 4 GiB limit of a WAV file "
                + "(\(secondsText(Double(schedule.endFrame) / Double(loaded.sampleRate) / 3600, digits: 1)) hours)\n"
                + "    fix: render fewer channels (--channels 1), a smaller --format, or a shorter MIDI file")
    }
    let writer: SoundFileWriter
    let frames: Int64
    do {
        writer = try SoundFileWriter(
            path: output, sampleRate: loaded.sampleRate, channelCount: channels,
            format: sampleFormat, kind: kind)
        // Left and right for every file: a mono one gets their average (see `interleave`).
        frames = try renderOffline(engine: engine, events: events, endFrame: schedule.endFrame) {
            (left: UnsafeBufferPointer<Float>, right: UnsafeBufferPointer<Float>) throws(FileError) in
            try writer.write(left: left, right: right)
        }
        try writer.finish()
    } catch {
        throw Failure(error.description)
    }
    let notes = events.count(where: \.strikes)
    let unmapped = engine.ignoredNotes.load(ordering: .relaxed)
    let played = notes - unmapped
    if unmapped > 0, !quiet {
        var instrument = loaded.instrumentSets.startingInstrument
        if let mode = noteOptions.unmapped { instrument.unmappedNotes = mode }
        printError(
            "bellkeys: warning: "
                + unmappedNotesText(
                    unmapped, of: notes, in: input, instrument: instrument, transpose: engine.configuration.transpose))
    }
    if !quiet, let text = missingProgramsText(engine, loaded) { printError("bellkeys: warning: " + text) }
    if played == 0 {
        let filtered = allEvents.count(where: \.strikes) - notes
        let why =
            notes > 0
            ? "none of its \(notes) notes has a bell in the map"
            : filtered > 0
                ? "--channel or --skip-drums left out all its \(filtered) notes"
                : "it has no notes"
        printError(
            "bellkeys: warning: \(output) is written but silent: no note struck a bell, because \(why) (exit status 3)")
    }
    if !quiet {
        let seconds = Double(frames) / Double(loaded.sampleRate)
        let limitedMs = Double(engine.limitedFrames.load(ordering: .relaxed)) * 1000 / Double(loaded.sampleRate)
        if let preset = loaded.presetDescription { print("playing \(preset) of \(loaded.path)") }
        if loaded.wholeFont { print("playing the whole font \(loaded.path): \(loaded.contentsText)") }
        print(
            "rendered \(input) to \(output): \(secondsText(seconds, digits: 3)) s, \(frames) frames, "
                + "\(loaded.sampleRate) Hz, \(channels) ch, "
                + (kind == .wav
                    ? sampleFormat.rawValue
                    : kind.isLossless ? "\(kind.displayName) \(sampleFormat.rawValue)" : kind.displayName))
        print(
            "  \(notes) notes, \(engine.peakVoiceCount.load(ordering: .relaxed)) voices at most, "
                + "\(engine.stolenVoices.load(ordering: .relaxed)) stolen, "
                + "\(engine.ignoredNotes.load(ordering: .relaxed)) unmapped notes ignored; "
                + "limiter active \(secondsText(limitedMs, digits: 1)) ms, "
                + "\(engine.clippedSamples.load(ordering: .relaxed)) samples clipped; "
                + "bank loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms, "
                + "peak memory \(secondsText(Double(residentMemory().peak) / 1_048_576, digits: 1)) MiB")
        if !settingsReport.files.isEmpty { print("  " + settingsReport.summary) }
    }
    if played == 0 { throw ExitCode(3) }
}

/// What to say of program changes that chose no set, or a substitute for a preset a whole font
/// lacks (nil: none did): how many, the last one and its channel, and what the sets have
/// (or what played in its place). Shared by `render` and the live session.
func missingProgramsText(_ engine: Engine, _ loaded: LoadedInstrument) -> String? {
    let count = engine.missingPrograms.load(ordering: .relaxed)
    guard count > 0 else { return nil }
    let last = engine.lastMissingProgram.load(ordering: .relaxed)
    let program = last & 127, bank = last >> 7 & 16_383, channel = last >> 21
    let changes = "\(count) program change\(count == 1 ? "" : "s")"
    if loaded.wholeFont {
        let sets = loaded.instrumentSets
        let asked = "channel \(channel + 1) asked for bank \(bank) program \(program), which the font lacks"
        guard let choice = sets.soundFontChoice(bank: bank, program: program, drums: channel == sets.drumChannel) else {
            return "\(changes) asked for presets the font lacks (the last: \(asked)); each channel kept its preset"
        }
        return "\(changes) asked for presets the font lacks, and played another in its place, as FluidSynth does "
            + "(the last: \(asked); it played \(loaded.sets[choice.set].preset ?? loaded.sets[choice.set].name))"
    }
    let have = loaded.sets.map { "\($0.program)\($0.bank.map { " (bank \($0))" } ?? "") \($0.name)" }
    return "\(changes) chose no set (the last: program \(program)"
        + "\(bank == 0 ? "" : ", bank \(bank)") on channel \(channel + 1)); each channel kept the set it had. The map's sets: "
        + have.joined(separator: ", ")
}
