import BellkeysFormats
import BellkeysModel

// The bells a classroom rings, from the instrument the phones' channel plays: with a map of
// several sets, one list for each set, and the teacher chooses among them. Thread: any.

/// One set of bells the classroom may ring: its name (nil for a map of one instrument) and its
/// bells.
public struct ClassroomSet: Equatable, Sendable {
    public var name: String?
    public var bells: [ClassroomBell]

    public init(name: String?, bells: [ClassroomBell]) {
        self.name = name
        self.bells = bells
    }
}

extension ClassroomBell {
    /// The most bells an instrument of regions gives the classroom: an octave and its top note,
    /// C to C, as the bundled bells.
    public static let maximumPerSet = 13

    /// The bells `instrument` gives the classroom. A map's keys are its bells (every key it
    /// maps, damped where the key damps: `Instrument.bells`). An instrument of regions (an SFZ
    /// file, a SoundFont preset) sounds more keys than phones can hold: its bells are the 13
    /// keys of the octave C to C that sounds the most of them, the nearest C4 among equals (C4..C5
    /// for most instruments, C5..C6 for a glockenspiel of G4..C7), each key that a strike alone
    /// sounds (not one behind a keyswitch other than the default, a controller or a held key); a
    /// bell damps when a region that sounds it stops on release (not a one-shot).
    public static func bells(of instrument: Instrument) -> [ClassroomBell] {
        if !instrument.bells.isEmpty {
            return instrument.bells.sorted { $0.keyRange.lowerBound < $1.keyRange.lowerBound }.map { bell in
                let note = bell.keyRange.lowerBound
                let damps: Bool
                if case .damp = bell.noteOff { damps = true } else { damps = false }
                return ClassroomBell(note: note, name: noteName(note), damps: damps)
            }
        }
        // The regions a phone's strike sounds: those that need no keyswitch but the instrument's
        // default, no controller away from its starting value, and no other key held.
        let playable = instrument.regions.dropFirst(instrument.bellCount).filter { region in
            (region.keyswitch == nil || region.keyswitch == instrument.defaultKeyswitch) && region.heldKeys != .legato
                && region.controllerRanges.allSatisfy { $0.value.contains(instrument.controllerDefaults[$0.key] ?? 0) }
        }
        func regions(_ note: Int) -> [Region] { playable.filter { $0.keyRange.contains(note) } }
        var best: (low: Int, count: Int)?
        for low in stride(from: 0, through: 120, by: 12) {
            let count = (low..<min(128, low + maximumPerSet)).filter { !regions($0).isEmpty }.count
            guard count > 0 else { continue }
            if let b = best, count < b.count || (count == b.count && abs(low - 60) >= abs(b.low - 60)) { continue }
            best = (low, count)
        }
        guard let best else { return [] }
        return (best.low..<min(128, best.low + maximumPerSet)).compactMap { note in
            let sounding = regions(note)
            guard !sounding.isEmpty else { return nil }
            let damps = sounding.contains { region in
                if region.envelope != nil { return !region.ignoresNoteOff && region.loopMode != .oneShot }
                if case .damp = region.noteOff { return true }
                return false
            }
            return ClassroomBell(note: note, name: noteName(note), damps: damps)
        }
    }
}
