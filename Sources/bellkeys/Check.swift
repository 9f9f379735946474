import ArgumentParser
import BellkeysControl
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import Glibc

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a map file, load its samples, and print the resolved key table.",
        discussion: "Nothing is played. Exit status 0 when the map is valid, 1 with every problem listed when not.")

    @OptionGroup var mapOptions: MapOptions
    @OptionGroup var settingsOptions: SettingsOptions

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Prepare the bank for this output rate in Hz, 8000 to 384000 (default: the samples' rate, 48000 for the bundled bells).",
            valueName: "hz"))
    var rate: Int?

    func validate() throws {
        try validateRate(rate)
    }

    func run() throws {
        try reporting {
            let loaded = try mapOptions.load(sampleRate: rate, printsWarnings: false)
            print(describe(loaded))
            if !settingsReport.ignored { print(settingsReport.details.joined(separator: "\n")) }
        }
    }
}

/// The resolved key table that `check` prints (for an SFZ instrument or a SoundFont preset,
/// its regions).
func describe(_ loaded: LoadedInstrument) -> String {
    if loaded.wholeFont { return describeWholeFont(loaded) }
    if !loaded.sets.isEmpty { return describeSets(loaded) }
    if loaded.hasRegions { return describeRegions(loaded) }
    let map = loaded.map
    var lines: [String] = []
    lines.append("map: \(loaded.path)")
    lines.append(
        "  \(map.keys.count) keys, \(loaded.bank.count) sample files, \(loaded.sampleRate) Hz, "
            + "\(loaded.bank.byteCount / 1024) KiB of samples, loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms, "
            + "peak memory \(secondsText(Double(residentMemory().peak) / 1_048_576, digits: 1)) MiB")
    lines.append(
        "  master volume \(decibelsText(map.masterVolumeDecibels)), velocity curve \(map.velocityCurve.rawValue), "
            + "polyphony \(map.polyphony), unmapped notes: \(map.unmappedNotes.rawValue)")
    lines.append("  " + soundText(loaded.instrument))
    lines.append(
        "  " + pad("key", 5) + pad("midi", 5) + pad("tag", 4) + pad("gain", 9) + pad("note-off", 16)
            + pad("choke", 6) + pad("pan", 6) + pad("length", 8) + "sample")
    for (i, key) in map.keys.enumerated() {
        let sampleIndex = loaded.instrument.bells[i].sampleIndex
        let seconds = Double(loaded.bank.frameCounts[sampleIndex]) / Double(loaded.sampleRate)
        let noteOff = noteOffText(key.noteOff)
        var notes: [String] = []
        if loaded.fileSampleRates[sampleIndex] != loaded.sampleRate {
            notes.append("resampled from \(loaded.fileSampleRates[sampleIndex]) Hz")
        }
        if loaded.fadedEnds[sampleIndex] { notes.append("abrupt end faded over 2 ms") }
        lines.append(
            "  " + pad(noteName(key.note), 5) + pad("\(key.note)", 5) + pad(key.tag.map { "\($0)" } ?? "-", 4)
                + pad(decibelsText(key.gainDecibels), 9) + pad(noteOff, 16)
                + pad(key.chokeGroup == 0 ? "-" : "\(key.chokeGroup)", 6) + pad(panText(key.pan), 6)
                + pad(secondsText(seconds) + " s", 8) + loaded.samplePaths[sampleIndex]
                + (notes.isEmpty ? "" : "  (" + notes.joined(separator: ", ") + ")"))
    }
    let mapped = Set(map.keys.map(\.note))
    let folded = loaded.instrument.soundingNoteForEveryNote().enumerated().filter {
        $0.element != nil && !mapped.contains($0.offset)
    }
    if !folded.isEmpty {
        lines.append(
            "  other notes fold onto these keys: \(noteName(folded.first!.offset)) to \(noteName(folded.last!.offset))")
    }
    return lines.joined(separator: "\n")
}

/// The regions of an SFZ instrument as `check` prints them: what each plays, where and how.
func describeRegions(_ loaded: LoadedInstrument) -> String {
    var lines: [String] = []
    lines.append("instrument: \(loaded.path)" + (loaded.presetDescription.map { ", \($0)" } ?? ""))
    lines.append(
        "  \(loaded.contentsText), \(loaded.sampleRate) Hz, "
            + "\(loaded.bank.byteCount / 1024) KiB of samples, loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms, "
            + "peak memory \(secondsText(Double(residentMemory().peak) / 1_048_576, digits: 1)) MiB")
    lines.append("  " + soundText(loaded.instrument))
    for warning in loaded.warnings { lines.append("  note: " + warning) }
    lines.append(
        "  " + pad("keys", 10) + pad("vel", 8) + pad("centre", 7) + pad("tune", 6) + pad("volume", 9) + pad("pan", 6)
            + pad("attack/release", 16) + pad("loop", 17) + pad("length", 8) + "sample")
    let paths = Dictionary(uniqueKeysWithValues: loaded.samplePaths.enumerated().map { ($0.offset, $0.element) })
    for region in loaded.instrument.regions.dropFirst(loaded.instrument.bellCount) {
        let keys = "\(noteName(region.keyRange.lowerBound))-\(noteName(region.keyRange.upperBound))"
        let velocities = "\(region.velocityRange.lowerBound)-\(region.velocityRange.upperBound)"
        let envelope = region.envelope.map { "\(secondsText($0.attack))/\(secondsText($0.release)) s" } ?? "-"
        var loop = region.loopMode.rawValue
        if region.loopMode == .continuous || region.loopMode == .sustain {
            loop = "\(region.loopStart)-\(region.loopEnd)"
        }
        if region.triggersOnRelease { loop = "release" }
        let frames = loaded.bank.frameCount(of: region.sampleIndex)
        let stereo = loaded.bank.channelCounts[region.sampleIndex] == 2 ? " (stereo)" : ""
        lines.append(
            "  " + pad(keys, 10) + pad(velocities, 8) + pad(noteName(region.pitchKeycenter), 7)
                + pad(formatNumber(region.tuneCents), 6)
                + pad(decibelsText(20 * log10(Double(max(region.gain, 1e-10)))), 9)
                + pad(formatNumber((region.pan * 100).rounded()), 6) + pad(envelope, 16) + pad(loop, 17)
                + pad(secondsText(Double(frames) / Double(loaded.sampleRate)) + " s", 8)
                + (paths[region.sampleIndex] ?? "?") + stereo)
    }
    return lines.joined(separator: "\n")
}

/// The sets of a map of several, as `check` lists them: what chooses each, the channels it
/// starts on, its room and what it plays.
func describeSets(_ loaded: LoadedInstrument) -> String {
    var lines = ["map: \(loaded.path)"]
    lines.append(
        "  \(loaded.sets.count) sets, \(loaded.bank.count) samples, \(loaded.sampleRate) Hz, "
            + "\(loaded.bank.byteCount / 1024) KiB of samples, loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms, "
            + "peak memory \(secondsText(Double(residentMemory().peak) / 1_048_576, digits: 1)) MiB")
    lines.append("  a program change chooses a channel's set; render and play take --set NAME")
    lines.append(
        "  " + pad("program", 9) + pad("bank", 6) + pad("channels", 10) + pad("room", 8) + pad("name", 16) + "plays")
    for (k, set) in loaded.sets.enumerated() {
        var channels = set.channels.map { "\($0 + 1)" }.joined(separator: ",")
        if k == 0 {
            let others = (0..<16).filter { c in !loaded.sets.contains { $0.channels.contains(c) } }
            channels = others.count == 16 ? "all" : (others.isEmpty ? channels : "the rest")
        }
        let room = set.instrument.reverb.preset == .off ? "dry" : set.instrument.reverb.preset.rawValue
        lines.append(
            "  " + pad("\(set.program)", 9) + pad(set.bank.map(String.init) ?? "any", 6)
                + pad(channels.isEmpty ? "-" : channels, 10)
                + pad(room, 8) + pad(set.name, 16) + set.instrument.contentsText
                + (set.preset.map { ", preset \($0)" } ?? ""))
    }
    lines.append("  how each set sounds:")
    for set in loaded.sets { lines.append("    \(set.name): " + soundText(set.instrument)) }
    if !loaded.warnings.isEmpty {
        lines.append("  left out:")
        for warning in loaded.warnings { lines.append("    " + warning) }
    }
    if let chosen = loaded.startingSet {
        let set = loaded.sets[chosen]
        lines.append("set \(set.name) (--set: every channel starts on it): \(set.instrument.contentsText)")
        lines += describeKeysAndRegions(set.instrument, loaded).map { "  " + $0 }
    }
    return lines.joined(separator: "\n")
}

/// What shapes the sound beyond the samples, in one line: the room and its mix (and a
/// SoundFont's sends into it), where the bells stand, velocity timbre, pitch bend and the pan
/// controller.
func soundText(_ instrument: Instrument) -> String {
    let reverb = instrument.reverb
    var room =
        reverb.preset == .off || reverb.mix <= 0
        ? "room: off (dry)" : "room: \(reverb.preset.rawValue), mix \(formatNumber(reverb.mix))"
    if instrument.linearReverbSend {
        // In FluidSynth's percent: a region's send of 1 is its 20 %, CC91 128's.
        let sends = instrument.regions.map { (200 * Double($0.reverbSend)).rounded() / 10 }
        let low = formatNumber(sends.min() ?? 0), high = formatNumber(sends.max() ?? 0)
        room += ", the zones sending \(low == high ? low : "\(low) to \(high)") % into it (CC91 adds up to 20 %)"
    }
    let pans = instrument.regions.map { region in
        region.sideGains.map { panPosition(left: $0.x, right: $0.y) } ?? region.pan
    }
    let placed =
        pans.allSatisfy { $0 == 0 }
        ? "pan: centred" : "pan: \(panText(pans.min() ?? 0)) to \(panText(pans.max() ?? 0))"
    let timbre =
        instrument.velocityTimbre > 0
        ? "velocity timbre \(formatNumber(instrument.velocityTimbre)) (softer strikes darker)" : "velocity timbre off"
    let bend =
        instrument.followsPitchBend ? "pitch bend followed (±2 semitones, RPN 0 up to 24)" : "pitch bend ignored"
    let controller = instrument.followsPanController ? "CC10 moves the channels" : "CC10 ignored"
    return [room, placed, timbre, bend, controller].joined(separator: " · ")
}

/// What a note-off does to a key, as check's key tables print it: "ring", "damp 0.40 s".
func noteOffText(_ mode: NoteOffMode) -> String {
    switch mode {
    case .ring: "ring"
    case .damp(let seconds): "damp \(secondsText(seconds)) s"
    }
}

/// A pan position, -1 (left) to 1 (right), as check prints it: "0", "-0.6", "+0.35".
func panText(_ pan: Double) -> String {
    pan == 0 ? "0" : (pan > 0 ? "+" : "") + formatNumber((pan * 100).rounded() / 100)
}

/// The pan position of a key's gains (`panGains` undone).
func panPosition(left: Float, right: Float) -> Double {
    if left == 1 && right == 1 { return 0 }
    return (atan2(Double(right), Double(left)) / 0.785_398_163_397_448_3 - 1)
}

/// A set's keys and regions as `check --set` lists them (from the engine's instrument: a map's
/// tags are not kept there).
func describeKeysAndRegions(_ instrument: Instrument, _ loaded: LoadedInstrument) -> [String] {
    var lines: [String] = [soundText(instrument)]
    let rate = Double(loaded.sampleRate)
    func length(_ index: Int) -> String { secondsText(Double(loaded.bank.frameCount(of: index)) / rate) + " s" }
    func path(_ index: Int) -> String { index < loaded.samplePaths.count ? loaded.samplePaths[index] : "?" }
    if !instrument.bells.isEmpty {
        lines.append(
            pad("key", 5) + pad("midi", 5) + pad("gain", 9) + pad("note-off", 16) + pad("choke", 6) + pad("pan", 6)
                + pad("length", 8) + "sample")
        for bell in instrument.bells {
            let note = bell.keyRange.lowerBound, noteOff = noteOffText(bell.noteOff)
            let (left, right) = bell.sideGains.map { ($0.x, $0.y) } ?? (1, 1)
            lines.append(
                pad(noteName(note), 5) + pad("\(note)", 5)
                    + pad(decibelsText(20 * log10(Double(max(bell.gain, 1e-10)))), 9) + pad(noteOff, 16)
                    + pad(bell.group == 0 ? "-" : "\(bell.group)", 6)
                    + pad(panText(panPosition(left: left, right: right)), 6)
                    + pad(length(bell.sampleIndex), 8) + path(bell.sampleIndex))
        }
    }
    if instrument.regions.count > instrument.bellCount {
        lines.append(pad("keys", 10) + pad("vel", 8) + pad("centre", 7) + pad("pan", 6) + pad("length", 8) + "sample")
        for region in instrument.regions.dropFirst(instrument.bellCount) {
            lines.append(
                pad("\(noteName(region.keyRange.lowerBound))-\(noteName(region.keyRange.upperBound))", 10)
                    + pad("\(region.velocityRange.lowerBound)-\(region.velocityRange.upperBound)", 8)
                    + pad(noteName(region.pitchKeycenter), 7) + pad(panText(region.pan), 6)
                    + pad(length(region.sampleIndex), 8) + path(region.sampleIndex))
        }
    }
    return lines
}
