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
    /// The rule a program change chooses a set by: a map's, or a whole SoundFont's.
    public var programSelection: ProgramSelection = .map

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

/// How a program change chooses among the sets. Thread: any.
public enum ProgramSelection: Sendable, Equatable {
    /// A map's: the bank select is CC0 × 128 + CC32; the first set with the program and that bank,
    /// else the first with the program and no bank of its own; a program no set has leaves the
    /// channel as it was.
    case map
    /// A whole SoundFont's, as FluidSynth 2.3.1 chooses its presets (its default "gs" bank
    /// select): the bank is CC0 alone (CC32 is ignored); channel 10 plays bank 128 whatever CC0
    /// says, when the font has a drum kit there; a program the font lacks plays a substitute:
    /// bank 128 program 0 on channel 10, else bank 0 of the same program, then bank 0 program 0.
    /// A program with no substitute either leaves the channel as it was.
    case soundFont
}

extension InstrumentSets {
    /// The MIDI channel (0...15) that plays drum kits under `.soundFont`: channel 10 (9), when a
    /// set is in bank 128; nil otherwise (every channel then chooses as the others do).
    public var drumChannel: Int? {
        programSelection == .soundFont && sets.contains { $0.bank == 128 } ? 9 : nil
    }

    /// Under `.soundFont`: the set a program change to `program` chooses on a channel whose bank
    /// select (CC0) is `bank`, or on the drum channel; and whether it is a substitute for a
    /// preset the font lacks. Nil when there is none. Thread: any.
    public func soundFontChoice(bank: Int, program: Int, drums: Bool) -> (set: Int, substituted: Bool)? {
        soundFontChoice(bank: bank, program: program, drums: drums, index: presetIndex())
    }

    /// `soundFontChoice` for every bank select 0...127 of a melodic channel and for the drum
    /// channel (at bank 128): at 128 b + p, the set (+ 65,536 when it is a substitute; -1: none).
    public func soundFontChoices() -> [Int32] {
        let index = presetIndex()
        return (0..<129 * 128).map { i in
            guard let choice = soundFontChoice(bank: i >> 7, program: i & 127, drums: i >> 7 == 128, index: index)
            else { return -1 }
            return Int32(choice.set + (choice.substituted ? 65_536 : 0))
        }
    }

    /// The first set of each bank and program (at bank × 128 + program).
    private func presetIndex() -> [Int: Int] {
        var index: [Int: Int] = [:]
        for (k, set) in sets.enumerated() where index[(set.bank ?? -1) << 7 | set.program] == nil {
            index[(set.bank ?? -1) << 7 | set.program] = k
        }
        return index
    }

    private func soundFontChoice(bank: Int, program: Int, drums: Bool, index: [Int: Int]) -> (
        set: Int, substituted: Bool
    )? {
        func find(_ bank: Int, _ program: Int) -> Int? { index[bank << 7 | program] }
        let wanted = drums ? 128 : bank
        if let exact = find(wanted, program) { return (exact, false) }
        let substitute = drums ? find(128, 0) : find(0, program) ?? find(0, 0)
        return substitute.map { ($0, true) }
    }

    /// The sets of a whole SoundFont's presets (each set's `bank` its preset's bank), chosen as
    /// FluidSynth chooses (`ProgramSelection.soundFont`): each channel starts on bank 0 program
    /// 0 (else the first set), the drum channel on bank 128 program 0.
    /// - Precondition: `sets` is not empty.
    public init(soundFontPresets sets: [InstrumentSet]) {
        precondition(!sets.isEmpty)
        self.sets = sets
        followsProgramChange = true
        programSelection = .soundFont
        let melodic = sets.firstIndex { $0.bank == 0 && $0.program == 0 } ?? 0
        startingSets = [Int](repeating: melodic, count: 16)
        if let drums = drumChannel, let kit = soundFontChoice(bank: 0, program: 0, drums: true) {
            startingSets[drums] = kit.set
        }
    }
}

extension InstrumentSets {
    /// The most rooms (reverb settings) an engine holds: a map of sets that rings in more is
    /// refused. (16 lanes each: 128 lanes, one bit each in the engine's `UInt128` lane masks.)
    public static let maximumRooms = 8
    /// The most sets an engine holds (a whole font's presets; a map holds at most 128).
    public static let maximumSets = 4_096
}
