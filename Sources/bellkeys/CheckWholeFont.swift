import BellkeysControl
import BellkeysFormats
import BellkeysLoading
import BellkeysSystem

/// A whole SoundFont as `check --map FONT` lists it: how its presets are chosen, each preset
/// (bank, program, name, what it plays, how many things it asks for that bellkeys leaves out),
/// then what each leaves out, a line each.
func describeWholeFont(_ loaded: LoadedInstrument) -> String {
    let font = loaded.map.soundFont.map { " (the map's soundfont \($0))" } ?? ""
    var lines = ["soundfont: \(loaded.path)\(font)"]
    lines.append(
        "  \(loaded.contentsText); \(loaded.bank.count) samples, \(loaded.sampleRate) Hz, "
            + "\(loaded.bank.byteCount / 1024) KiB of samples, loaded in \(secondsText(loaded.loadSeconds * 1000, digits: 1)) ms, "
            + "peak memory \(secondsText(Double(residentMemory().peak) / 1_048_576, digits: 1)) MiB")
    lines.append(
        "  as in FluidSynth, a channel's program change chooses its preset in the bank CC0 selects; channel 10 plays bank 128"
    )
    lines.append(
        "  play one preset alone with --program N (and --bank B when it is not bank 0): it loads only its samples")
    lines.append("  " + pad("bank", 6) + pad("program", 9) + pad("name", 22) + pad("left out", 10) + "plays")
    for set in loaded.sets {
        // (Each line begins with the font's path, which a map names: the preset is enough.)
        let about = ": preset \(set.preset ?? ""): "
        let leftOut = loaded.presetWarnings.filter { $0.contains(about) }.count
        lines.append(
            "  " + pad("\(set.bank ?? 0)", 6) + pad("\(set.program)", 9) + pad(set.name, 22)
                + pad(leftOut == 0 ? "-" : "\(leftOut)", 10) + set.instrument.contentsText)
    }
    if !loaded.presetWarnings.isEmpty {
        lines.append("  left out:")
        for warning in loaded.presetWarnings { lines.append("    " + warning) }
    }
    return lines.joined(separator: "\n")
}
