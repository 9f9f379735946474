import ArgumentParser
import BellkeysEngine

/// Which notes are played, shared by every command that plays (play, demo, render): the same
/// words and the same rules for a live keyboard and a file.
struct NoteOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("Play only MIDI channel n (1 to 16); default: all channels.",
                               discussion: "Not to be confused with --channels, the number of audio channels.",
                               valueName: "n"))
    var channel: Int?

    @Flag(help: "Leave out MIDI channel 10, where General MIDI files put the drums (by default every channel rings as bells).")
    var skipDrums = false

    @Option(help: ArgumentHelp("Notes outside the map's keys: ignore (drop them) or fold (move them by octaves onto the bells), in place of the map's unmappedNotes.",
                               discussion: "Most songs reach beyond the 13 bells of C4..C5; with fold every note rings.",
                               valueName: "ignore|fold"))
    var unmapped: UnmappedNotes?

    func validate() throws {
        if let channel, !(1...16).contains(channel) {
            throw ValidationError("--channel \(channel) is out of range; MIDI channels are 1 to 16")
        }
    }

    var filter: ChannelFilter { ChannelFilter(channel: channel.map { UInt8($0 - 1) }, skipsDrums: skipDrums) }
}

extension UnmappedNotes: ExpressibleByArgument {}
