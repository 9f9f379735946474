/// One set of bells in a map of several, from the file to the engine: an instrument, the
/// program number (and bank) that chooses it, its name, the channels that start on it, and the
/// SoundFont preset it plays, if it plays one. Thread: built on the control thread; the engine
/// copies it.
public struct InstrumentSet: Sendable {
    public var name: String
    /// The MIDI program number that chooses the set, 0...127 (as sent on the wire).
    public var program: Int
    /// The bank (CC0 × 128 + CC32, 0...16383) a program change must come with; nil: any bank.
    public var bank: Int?
    /// MIDI channels 0...15 that the map starts on it (the loader gives them to
    /// `InstrumentSets.init(sets:startingSet:startingSets:)`, which starts every other channel
    /// on the starting set).
    public var channels: [Int]
    public var instrument: Instrument
    /// The SoundFont preset it plays, as "bank:program name" (nil: it plays none).
    public var preset: String?

    public init(
        name: String, program: Int, bank: Int? = nil, channels: [Int] = [], instrument: Instrument,
        preset: String? = nil
    ) {
        self.name = name
        self.program = program
        self.bank = bank
        self.channels = channels
        self.instrument = instrument
        self.preset = preset
    }
}

/// What an engine plays: one instrument, or several sets, each channel playing the set its
/// last program change chose. Every set is in the engine from the start: choosing one is a
/// table lookup on the render thread, never a load. Thread: built on the control thread.
public struct InstrumentSets: Sendable {
    public var sets: [InstrumentSet]
    /// The set each MIDI channel (0...15) plays before any program change: an index into `sets`.
    public var startingSets: [Int]
    /// Whether program changes choose sets. Off for a single instrument (a map without sets),
    /// which plays the same whatever program a MIDI file or keyboard sends.
    public var followsProgramChange: Bool

    /// A single instrument: every channel plays it, and program changes are ignored.
    public init(_ instrument: Instrument) {
        sets = [InstrumentSet(name: "", program: 0, instrument: instrument)]
        startingSets = [Int](repeating: 0, count: 16)
        followsProgramChange = false
    }

    /// Several sets, chosen by program change; every channel starts on `startingSet` unless
    /// `startingSets` says otherwise.
    /// - Precondition: `sets` is not empty and every index is in it.
    public init(sets: [InstrumentSet], startingSet: Int = 0, startingSets: [Int: Int] = [:]) {
        precondition(!sets.isEmpty && sets.indices.contains(startingSet))
        self.sets = sets
        self.startingSets = (0..<16).map { startingSets[$0] ?? startingSet }
        precondition(self.startingSets.allSatisfy { sets.indices.contains($0) })
        followsProgramChange = true
    }

    /// The instrument MIDI channel 1 starts on (the one instrument of a map without sets).
    /// Thread: control.
    public var startingInstrument: Instrument { sets[startingSets[0]].instrument }
}

extension InstrumentSets {
    /// The most rooms (reverb settings) an engine holds: a map of sets that rings in more is
    /// refused. (16 lanes each: 128 lanes, one bit each in the engine's `UInt128` lane masks.)
    public static let maximumRooms = 8
}
