import BellkeysModel

/// A note-on modulator as the render thread reads it (`Modulator`): its sources (`velocity`,
/// `key`, a controller number 0...127, or `none` for no amount source), where its curves start in
/// `NoteModulatorTable.curves`, its amount and destination (`level`, `pitch`, `cutoff`,
/// `resonance`); the render thread tests them as literals (`noteOnSums`).
struct ModulatorTerm {
    static let velocity = -1
    static let key = -2
    static let none = -3
    static let level: UInt8 = 0
    static let pitch: UInt8 = 1
    static let cutoff: UInt8 = 2
    static let resonance: UInt8 = 3

    var source: Int
    var amountSource: Int
    var destination: UInt8
    var curve: Int32
    var amountCurve: Int32
    var amount: Double
}

/// Where a region's note-on modulators keep what they move (`NoteModulators`): the lowest and
/// highest cutoff (Hz, the highest below 0.45 of the output's rate), the most decibels they may
/// add to a full-velocity strike's level, the region's resonance (dB) and where the sum stays,
/// and the share of its change the level moves by.
struct NoteModulatorBounds {
    var lowestCutoff = 0.0
    var highestCutoff = 0.0
    var levelCeiling = 0.0
    var resonance = 0.0
    var lowestResonance = 0.0
    var highestResonance = 0.0
    var resonanceLevelShare = 0.0
}

/// Every region's note-on modulators in one list, their curves (128 values each) in another,
/// and for each region the bounds of what they move.
/// Built once on the control thread; read only after. Thread: built on control; read on render.
struct NoteModulatorTable: BitwiseCopyable {
    let terms: UnsafePointer<ModulatorTerm>
    let curves: UnsafePointer<Double>
    /// Per region: where its modulators keep what they move.
    let bounds: UnsafePointer<NoteModulatorBounds>
    /// Per region: where its terms start, and how many (`placeOf(region:)`).
    let starts: UnsafePointer<Int32>
    let counts: UnsafePointer<Int32>

    init(_ regions: [Region], sampleRate: Int) {
        var terms: [ModulatorTerm] = [], curves: [Double] = []
        var bounds: [NoteModulatorBounds] = [], starts: [Int32] = [], counts: [Int32] = []
        func number(_ source: ModulatorSource?) -> Int {
            switch source {
            case .velocity: ModulatorTerm.velocity
            case .key: ModulatorTerm.key
            case .controller(let n): max(0, min(127, n))
            case nil: ModulatorTerm.none
            }
        }
        func stored(_ curve: [Double]) -> Int32 {
            let at = Int32(curves.count)
            curves += (0..<128).map { $0 < curve.count ? curve[$0] : (curve.last ?? 0) }
            return at
        }
        func destination(_ d: ModulatorDestination) -> UInt8 {
            switch d {
            case .levelDecibels: ModulatorTerm.level
            case .pitchCents: ModulatorTerm.pitch
            case .cutoffCents: ModulatorTerm.cutoff
            case .resonanceDecibels: ModulatorTerm.resonance
            }
        }
        for region in regions {
            starts.append(Int32(terms.count))
            let set = region.noteModulators
            for m in set?.modulators ?? [] {
                terms.append(
                    ModulatorTerm(
                        source: number(m.source), amountSource: number(m.amountSource),
                        destination: destination(m.destination), curve: stored(m.curve),
                        amountCurve: m.amountSource == nil ? 0 : stored(m.amountCurve), amount: m.amount))
            }
            counts.append(Int32(terms.count) - starts[starts.count - 1])
            let range = set?.cutoffRange ?? 0...Double.infinity
            let resonances = set?.resonanceRange ?? 0...0
            bounds.append(
                NoteModulatorBounds(
                    lowestCutoff: range.lowerBound, highestCutoff: min(range.upperBound, 0.45 * Double(sampleRate)),
                    levelCeiling: set?.levelCeilingDecibels ?? 0, resonance: region.resonance,
                    lowestResonance: resonances.lowerBound, highestResonance: resonances.upperBound,
                    resonanceLevelShare: set?.resonanceLevelShare ?? 0))
        }
        func copied<T>(_ values: [T], padding: T) -> UnsafePointer<T> {
            let stored = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
            stored.initialize(repeating: padding, count: max(values.count, 1))
            stored.update(from: values, count: values.count)
            return UnsafePointer(stored)
        }
        let empty = ModulatorTerm(
            source: 0, amountSource: ModulatorTerm.none, destination: 0, curve: 0, amountCurve: 0, amount: 0)
        self.terms = copied(terms, padding: empty)
        self.curves = copied(curves, padding: 0)
        self.bounds = copied(bounds, padding: NoteModulatorBounds())
        self.starts = copied(starts, padding: 0)
        self.counts = copied(counts, padding: 0)
    }

    /// Where region `i`'s terms start in `terms`, and how many it has. Thread: control.
    func placeOf(region i: Int) -> (Int32, Int32) { (starts[i], counts[i]) }

    func deallocate() {
        terms.deallocate()
        curves.deallocate()
        bounds.deallocate()
        starts.deallocate()
        counts.deallocate()
    }
}
