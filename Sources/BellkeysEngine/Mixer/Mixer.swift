import BellkeysModel

/// Per MIDI channel: the gains its bus goes out through, each ramped: CC7 × CC11 × master
/// (`bus`), the CC10 pan's left and right (1 and 1 at the centre), the CC91 send into the rooms.
struct ChannelGains {
    var bus = Ramp(0)
    var panLeft = Ramp(1), panRight = Ramp(1)
    /// The gain of CC91, the reverb send (by the channel's law: `Mixer.linearSends`), ramped.
    var send = Ramp(1)
}

/// Where the voices' buses go: a bus per lane (a channel in a room), the channels' gains, the
/// rooms (each a `Reverb`) and their sends, and the tables of the controllers' gains. The
/// limiter's gain, the master gain and the panned channels are the engine's scalars. Written on
/// the render thread through its pointers; allocated in `init`, never resized. The engine owns
/// its memory (`deallocate`). Thread: built on control; render.
struct Mixer: BitwiseCopyable {
    /// Per channel: the gains of its bus.
    let channels: UnsafeMutablePointer<ChannelGains>
    /// A bus per lane (a channel in a room: lane c + 16 r) for its centred voices.
    let buses: UnsafeMutablePointer<Float>
    /// Per lane, a left and a right bus for its panned voices (lane l: 2l and 2l + 1).
    let sideBuses: UnsafeMutablePointer<Float>
    /// The rooms the bells ring in: one per room setting (`Engine.roomSettings`) the sets have,
    /// or may be given live (`chooseRoom`); each fed by the sends (CC91) of the voices that ring
    /// in it. A dry one (`roomIsWet` false) has no reverb to run. At most `maximumRooms`.
    let rooms: UnsafeMutablePointer<Reverb>
    let roomIsWet: UnsafeMutablePointer<Bool>
    let roomCount: Int
    /// Each room's input for a segment (room r: from `r × maxBlockFrames`).
    let sendBuses: UnsafeMutablePointer<Float>
    /// Per lane, the sends of its voices with a send of their own (`RegionSlot.reverbSend`),
    /// taken before their pan; into the room through the channel's gain, not its CC91.
    let voiceSends: UnsafeMutablePointer<Float>
    /// The channels whose CC91 follows FluidSynth's straight line (bit c: channel c; their
    /// starting set's `Instrument.linearReverbSend`), the others the square law.
    let linearSends: UInt16
    /// Per set: the room its next voices ring in, which a room chosen live changes.
    let setRooms: UnsafeMutablePointer<Int>
    /// Whether any room is wet, and the lanes of the wet ones (bit c + 16 r).
    let hasReverb: Bool
    let wetLanes: UInt128
    /// The right channel of a segment rendered for a mono output, before the downmix.
    let segmentRight: UnsafeMutablePointer<Float>
    /// The pan law's left and right gains for each CC10 value (value v: 2v and 2v + 1).
    let panTable: UnsafeMutablePointer<Float>
    /// The square law's gain for each value of CC7, CC11 and CC91.
    let controllerGains: UnsafeMutablePointer<Float>
    /// How far the limiter's gain recovers each frame.
    let limiterRecovery: Float

    /// The buses and `rooms` (`Engine.roomTable`'s), each set in its room of `setRooms`, every
    /// channel's gains at rest (its bus gain is set once the controls are known). Thread: control.
    init(
        rooms distinct: [ReverbSettings], setRooms: [Int], linearSends: UInt16 = 0, configuration: EngineConfiguration
    ) {
        let block = configuration.maxBlockFrames
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: ChannelGains(), count: 16)
        roomCount = distinct.count
        rooms = .allocate(capacity: roomCount)
        roomIsWet = .allocate(capacity: roomCount)
        for (r, settings) in distinct.enumerated() {
            (rooms + r).initialize(to: Reverb(settings: settings, sampleRate: configuration.sampleRate))
            roomIsWet[r] = settings != .off
        }
        hasReverb = distinct.contains { $0 != .off }
        var lanes: UInt128 = 0
        for (r, settings) in distinct.enumerated() where settings != .off { lanes |= UInt128(0xFFFF) << (16 * r) }
        wetLanes = lanes
        self.setRooms = .allocate(capacity: setRooms.count)
        self.setRooms.initialize(from: setRooms, count: setRooms.count)
        sendBuses = .allocate(capacity: roomCount * block)
        sendBuses.initialize(repeating: 0, count: roomCount * block)
        voiceSends = .allocate(capacity: 16 * roomCount * block)
        voiceSends.initialize(repeating: 0, count: 16 * roomCount * block)
        self.linearSends = linearSends
        buses = .allocate(capacity: 16 * roomCount * block)
        buses.initialize(repeating: 0, count: 16 * roomCount * block)
        sideBuses = .allocate(capacity: 32 * roomCount * block)
        sideBuses.initialize(repeating: 0, count: 32 * roomCount * block)
        segmentRight = .allocate(capacity: block)
        segmentRight.initialize(repeating: 0, count: block)
        (panTable, controllerGains) = Self.controllerTables()
        limiterRecovery = Float(
            1 / max(configuration.limiterReleaseSeconds * Double(configuration.sampleRate), 1))
    }

    /// The pan law's left and right gains for each CC10 value (value v: 2v and 2v + 1), and the
    /// square law's gain for each value of CC7, CC11 and CC91. Thread: control.
    static func controllerTables() -> (pan: UnsafeMutablePointer<Float>, gains: UnsafeMutablePointer<Float>) {
        let pan = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        for v in 0..<128 {
            let (left, right) = panGains(panPosition(controllerValue: v))
            pan[2 * v] = left
            pan[2 * v + 1] = right
        }
        let gains = UnsafeMutablePointer<Float>.allocate(capacity: 128)
        for v in 0..<128 { gains[v] = VelocityCurve.square.gain(velocity: v) }
        return (pan, gains)
    }

    /// Frees what `init` allocated, the rooms' own memory too. Thread: control.
    func deallocate() {
        channels.deallocate()
        for r in 0..<roomCount { rooms[r].deallocate() }
        rooms.deallocate()
        roomIsWet.deallocate()
        sendBuses.deallocate()
        voiceSends.deallocate()
        setRooms.deallocate()
        buses.deallocate()
        sideBuses.deallocate()
        segmentRight.deallocate()
        panTable.deallocate()
        controllerGains.deallocate()
    }
}
