import BellkeysModel

/// Per MIDI channel: what its controllers and programs have set (the gains they make are the
/// mixer's, `ChannelGains`).
struct ChannelControls {
    var volume = 100 // CC7, General MIDI default
    var expression = 127 // CC11
    var sustain = false // CC64
    /// Pitch bend, 0...16383 (8192: none), its range in cents (RPN 0), and the registered
    /// parameter chosen by CC101/CC100 (127: none).
    var bend = 8192
    var bendRangeCents = 200
    /// The range as RPN 0's data entry gave it, in semitones (0...127, unclamped: what a
    /// modulator reading the range reads, as FluidSynth keeps it).
    var bendRangeSemitones = 2
    var parameterHigh = 127
    var parameterLow = 127
    /// The set the channel plays (`RegionTable.sets`), and the bank select (CC0, CC32) a program
    /// change will choose it in.
    var set = 0
    var bankHigh = 0
    var bankLow = 0
    /// Channel pressure (aftertouch), 0...127.
    var pressure = 0
}

/// What the MIDI messages played so far leave behind: each channel's controls, every
/// controller's value, the keys held down (their velocity, their set, how far they were moved),
/// the round-robin counters and each set's keyswitch. Written on the render thread as events
/// are applied; allocated in `init`, never resized. The engine owns its memory (`deallocate`).
/// Thread: built on control; render.
struct MIDIState: BitwiseCopyable {
    /// Per channel: its controls.
    let channels: UnsafeMutablePointer<ChannelControls>
    /// Every controller's last value per channel (128 c + n), for the regions' ranges.
    let controllerValues: UnsafeMutablePointer<UInt8>
    /// The velocity of each key held down (128 c + n; 0: up), for release samples, and how many
    /// keys each channel holds, for `first` and `legato` regions.
    let noteVelocities: UnsafeMutablePointer<UInt8>
    /// Each key's polyphonic pressure (128 c + n, the key as it sounds), 0...127.
    let keyPressures: UnsafeMutablePointer<UInt8>
    let heldKeyCounts: UnsafeMutablePointer<Int32>
    /// The set each key held down was struck in (128 c + n), whose release samples its note-off
    /// starts.
    let noteSets: UnsafeMutablePointer<UInt16>
    /// The semitones each key of a MIDI input (128 c + key) was moved by when it was struck
    /// (the transposition, or 0 for a keyswitch), which its note-off moves by too.
    let keyShifts: UnsafeMutablePointer<Int8>
    /// Round robin: per region, the strikes of its keys so far (modulo its sequence length).
    let sequenceCounters: UnsafeMutablePointer<Int32>
    /// Per set: the keyswitch in force (-1: none), which a key in its keyswitch range chooses.
    let keyswitches: UnsafeMutablePointer<Int>

    /// The state before any message: each channel on its starting set with its controller
    /// defaults, every key up, no strike counted, each set on its default keyswitch. Thread: control.
    init(_ setList: InstrumentSets, regionCount: Int, transpose: Int) {
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: ChannelControls(), count: 16)
        for ch in 0..<16 { channels[ch].set = setList.startingSets[ch] }
        controllerValues = Engine.startingControllers(setList)
        noteVelocities = .allocate(capacity: 16 * 128)
        noteVelocities.initialize(repeating: 0, count: 16 * 128)
        keyPressures = .allocate(capacity: 16 * 128)
        keyPressures.initialize(repeating: 0, count: 16 * 128)
        heldKeyCounts = .allocate(capacity: 16)
        heldKeyCounts.initialize(repeating: 0, count: 16)
        noteSets = .allocate(capacity: 16 * 128)
        noteSets.initialize(repeating: 0, count: 16 * 128)
        keyShifts = .allocate(capacity: 16 * 128)
        keyShifts.initialize(repeating: Int8(clamping: transpose), count: 16 * 128)
        sequenceCounters = .allocate(capacity: max(regionCount, 1))
        sequenceCounters.initialize(repeating: 0, count: max(regionCount, 1))
        keyswitches = .allocate(capacity: setList.sets.count)
        keyswitches.initialize(
            from: setList.sets.map { $0.instrument.defaultKeyswitch ?? -1 }, count: setList.sets.count)
    }

    /// Frees what `init` allocated. Thread: control.
    func deallocate() {
        channels.deallocate()
        controllerValues.deallocate()
        noteVelocities.deallocate()
        keyPressures.deallocate()
        heldKeyCounts.deallocate()
        noteSets.deallocate()
        keyShifts.deallocate()
        sequenceCounters.deallocate()
        keyswitches.deallocate()
    }
}
