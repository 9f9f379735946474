import ArgumentParser
import BellkeysEngine
import BellkeysFormats
import BellkeysModel

/// Which notes are played, shared by every command that plays (play, demo, render): the same
/// words and the same rules for a live keyboard and a file.
struct NoteOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Play only MIDI channel n, 1 to 16 (default: all channels).",
            discussion:
                "Not to be confused with --channels, the number of audio channels. The computer keyboard and the phones (--web) play on channel 1, or on this channel when it is given.",
            valueName: "n"))
    var channel: Int?

    @Flag(
        help:
            "Leave out MIDI channel 10, where General MIDI files put the drums (by default every channel rings as bells)."
    )
    var skipDrums = false

    @Option(
        help: ArgumentHelp(
            "Notes outside the map's keys: ignore (drop them) or fold (move them by octaves onto the bells), in place of the map's unmappedNotes (default: the map's, ignore if it says none).",
            discussion:
                "Most songs reach beyond the 13 bells of C4..C5; with fold every note rings. The bundled map folds; ignore leaves out what lies beyond.",
            valueName: "ignore|fold"))
    var unmapped: UnmappedNotes?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Semitones to move the notes of MIDI keyboards and MIDI files by, -48 to 48, in place of the map's transpose (default: the map's, 0 if it says none).",
            discussion:
                "For a keyboard whose middle C is not C4: --transpose 12 moves its C3 up to C4. Keyswitch keys, the computer keyboard (its arrow keys move its octave) and the phones are not moved.",
            valueName: "n"))
    var transpose: Int?

    func validate() throws {
        if let transpose, !MapFile.transposeRange.contains(transpose) {
            throw ValidationError("--transpose \(transpose) is out of range; use -48 to 48 semitones")
        }
        if let channel, !(1...16).contains(channel) {
            throw ValidationError("--channel \(channel) is out of range; MIDI channels are 1 to 16")
        }
        if channel == 10 && skipDrums {
            throw ValidationError("--channel 10 is the drum channel that --skip-drums leaves out; give one of them")
        }
    }

    var filter: ChannelFilter { ChannelFilter(channel: channel.map { UInt8($0 - 1) }, skipsDrums: skipDrums) }
}

extension UnmappedNotes: ExpressibleByArgument {}

/// What to tell a user whose notes found no bell: `count` of the `total` notes of the file
/// `source` (nil: a note played live), the instrument's real range (its keys and regions: for a
/// map of sets, those of the set channel 1 starts on, which the text says), and
/// the fix that fits it: folding if it is not on yet (in the map too, for a map of keys), else
/// what folding cannot mend. `transpose`: the engine's transposition of MIDI input, said when
/// not 0.
func unmappedNotesText(_ count: Int, of total: Int, in source: String?, instrument: Instrument, transpose: Int)
    -> String
{
    let range = instrument.soundingRange.map { "\(noteName($0.lowerBound))..\(noteName($0.upperBound))" } ?? "none"
    let isMap = instrument.bellCount == instrument.regions.count
    let moved = transpose == 0 ? "" : ", moved \(transpositionWords(transpose)) by the transposition,"
    let what =
        source.map { "\(count) of the \(total) notes of \($0)\(moved) have" }
        ?? (transpose == 0 ? "a note played has" : "a note played (a MIDI keyboard's\(moved.dropLast())) has")
    let has = isMap ? "no bell in the map (its keys: \(range))" : "no region in the instrument (it sounds \(range))"
    let were = count == 1 ? "was" : "were"
    switch instrument.unmappedNotes {
    case .ignore:
        return "\(what) \(has) and \(were) left out\n"
            + "    fix: add --unmapped fold to move notes outside \(range) by octaves onto the "
            + (isMap ? "bells (or set \"unmappedNotes\": \"fold\" in the map)" : "instrument's notes")
    case .fold:
        return "\(what) \(has), even folded by octaves, and \(were) left out\n"
            + (isMap
                ? "    fix: give the map a key for every note of the octave, or play those notes elsewhere"
                : "    fix: the instrument plays no region for them even moved by octaves (a gap between its regions, a range under an octave, or velocities its regions leave out); play them elsewhere, or give it regions there")
    }
}

/// A transposition for a person: "up 12 semitones", "down 1 semitone". Shared by the start-up
/// report and the unmapped notes' warning.
func transpositionWords(_ semitones: Int) -> String {
    "\(semitones > 0 ? "up" : "down") \(abs(semitones)) semitone\(abs(semitones) == 1 ? "" : "s")"
}
