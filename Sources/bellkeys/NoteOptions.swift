import ArgumentParser
import BellkeysEngine
import BellkeysFormats

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
            discussion: "Most songs reach beyond the 13 bells of C4..C5; with fold every note rings.",
            valueName: "ignore|fold"))
    var unmapped: UnmappedNotes?

    func validate() throws {
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
/// `source` (nil: a note played live), with the fix: folding if it is not on yet.
func unmappedNotesText(_ count: Int, of total: Int, in source: String?, instrument: Instrument) -> String {
    let mapped = instrument.keys.map(\.note)
    let range = "\(noteName(mapped.min() ?? 60))..\(noteName(mapped.max() ?? 72))"
    let what = source.map { "\(count) of the \(total) notes of \($0) have" } ?? "a note played has"
    switch instrument.unmappedNotes {
    case .ignore:
        return "\(what) no bell in the map (its keys: \(range)) and \(count == 1 ? "was" : "were") left out\n"
            + "    fix: add --unmapped fold to move notes outside \(range) by octaves onto the bells (or set \"unmappedNotes\": \"fold\" in the map)"
    case .fold:
        return
            "\(what) no bell in the map (its keys: \(range)), even folded by octaves, and \(count == 1 ? "was" : "were") left out\n"
            + "    fix: give the map a key for every note of the octave, or play those notes elsewhere"
    }
}
