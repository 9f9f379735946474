// The channels of one segment (`Engine.renderSegment`, SegmentMix.swift): each channel's lanes
// through its ramped gain (CC7 × CC11 × master), its pan (CC10) and its send (CC91) into the
// output and the rooms.

extension Engine {
    /// Whether the segment's output is stereo: a room rings (with one room, whenever it is
    /// wet; with several, a map of sets or rooms to choose live, while a wet one has voices or
    /// a tail, so that dry bells stay mono whatever rooms are waiting unused), a voice is
    /// panned, or a channel with voices is panned by CC10.
    @_noLocks
    @inline(__always)
    func segmentIsStereo(_ used: UsedLanes) -> Bool {
        var reverberant = mixer.hasReverb
        if mixer.roomCount > 1 {
            // (two ifs, not ||: the operator's autoclosure would retain self)
            reverberant = (used.centred | used.sides) & mixer.wetLanes != 0
            if !reverberant { reverberant = !roomsAreIdle }
        }
        // (a local, not the property: the operator's autoclosure would retain self)
        let panned = pannedChannels
        return reverberant || used.sideChannels != 0 || panned & (used.centredChannels | used.sideChannels) != 0
    }

    /// Each channel's lanes into `output` (and `other`, when `stereo`) through the channel's
    /// ramped gain, its pan when CC10 moves it off the centre, and its send into the wet
    /// rooms; a channel with nothing sounding settles its ramps. Returns the rooms with a send
    /// this segment (bit r: room r).
    @_noLocks
    @inline(__always)
    func mixChannels(
        _ used: UsedLanes, into output: UnsafeMutablePointer<Float>, _ other: UnsafeMutablePointer<Float>,
        stereo: Bool, frameCount n: Int
    ) -> UInt8 {
        let usedChannels = used.centredChannels | used.sideChannels
        // The channels CC10 pans as the segment begins (settling one leaves the others' bits).
        let panned = pannedChannels
        var sending: UInt8 = 0
        for r in 0..<mixer.roomCount where mixer.roomIsWet[r] {
            (mixer.sendBuses + r * configuration.maxBlockFrames).update(repeating: 0, count: n)
        }
        output.update(repeating: 0, count: n)
        if stereo { other.update(repeating: 0, count: n) }
        for channel in 0..<16 {
            let bit: UInt16 = 1 << channel
            if usedChannels & bit == 0 {
                settleSilentChannel(channel)
                continue
            }
            if mixer.hasReverb { sending |= sendChannel(channel, used, frameCount: n) }
            if panned & bit != 0 {
                mixPannedChannel(channel, used, into: output, other, frameCount: n)
            } else {
                mixCentredChannel(channel, used, into: output, other, stereo: stereo, frameCount: n)
            }
        }
        return sending
    }

    /// `channel`'s send into each wet room its lanes ring in: the lane's mono (a panned voice's
    /// two sides averaged) × the channel's gain × CC91, before its pan, and its voices' own
    /// sends × the channel's gain. Returns the rooms sent to.
    @_noLocks
    @inline(__always)
    func sendChannel(_ channel: Int, _ used: UsedLanes, frameCount n: Int) -> UInt8 {
        let stride = configuration.maxBlockFrames
        let ramp = mixer.channels[channel].bus, send = mixer.channels[channel].send
        var sending: UInt8 = 0
        if used.sent != 0 {
            for r in 0..<mixer.roomCount where used.sent & (1 << (channel + 16 * r)) != 0 {
                _ = addBus(
                    mixer.voiceSends + (channel + 16 * r) * stride, into: mixer.sendBuses + r * stride, ramp: ramp,
                    frameCount: n)
                sending |= 1 << r
            }
        }
        if send.framesLeft == 0, send.value == 0 {
            mixer.channels[channel].send.advance(by: n) // CC91 at 0: no more goes into the rooms
            return sending
        }
        var after = send
        var heard = false
        for r in 0..<mixer.roomCount where mixer.roomIsWet[r] {
            let lane = channel + 16 * r, sendBus = mixer.sendBuses + r * stride
            if used.centred & (1 << lane) != 0 {
                after = addBus(mixer.buses + lane * stride, into: sendBus, ramp: ramp, pan: send, frameCount: n)
                sending |= 1 << r
                heard = true
            }
            if used.sides & (1 << lane) != 0 {
                let sideLeft = mixer.sideBuses + 2 * lane * stride
                after = addBus(sideLeft, into: sendBus, ramp: ramp, pan: send, scale: 0.5, frameCount: n)
                _ = addBus(sideLeft + stride, into: sendBus, ramp: ramp, pan: send, scale: 0.5, frameCount: n)
                sending |= 1 << r
                heard = true
            }
        }
        if !heard { after.advance(by: n) } // (only dry lanes: the send moves on unheard)
        mixer.channels[channel].send = after
        return sending
    }

    /// A channel CC10 moves off the centre: each side of each lane through the channel's gain
    /// and its own pan gain.
    @_noLocks
    @inline(__always)
    func mixPannedChannel(
        _ channel: Int, _ used: UsedLanes, into output: UnsafeMutablePointer<Float>,
        _ other: UnsafeMutablePointer<Float>, frameCount n: Int
    ) {
        let stride = configuration.maxBlockFrames
        let ramp = mixer.channels[channel].bus
        let panLeft = mixer.channels[channel].panLeft, panRight = mixer.channels[channel].panRight
        var left = panLeft, right = panRight
        for r in 0..<mixer.roomCount {
            let lane = channel + 16 * r
            if used.centred & (1 << lane) != 0 {
                let bus = mixer.buses + lane * stride
                left = addBus(bus, into: output, ramp: ramp, pan: panLeft, frameCount: n)
                right = addBus(bus, into: other, ramp: ramp, pan: panRight, frameCount: n)
            }
            if used.sides & (1 << lane) != 0 {
                let sideLeft = mixer.sideBuses + 2 * lane * stride
                left = addBus(sideLeft, into: output, ramp: ramp, pan: panLeft, frameCount: n)
                right = addBus(sideLeft + stride, into: other, ramp: ramp, pan: panRight, frameCount: n)
            }
        }
        var after = ramp
        after.advance(by: n)
        mixer.channels[channel].bus = after
        mixer.channels[channel].panLeft = left
        mixer.channels[channel].panRight = right
        settlePan(channel: channel)
    }

    /// A centred channel: each lane's bus into `output` (and `other`, when the segment is
    /// stereo), each panned voice's side buses into their sides, through the channel's gain.
    @_noLocks
    @inline(__always)
    func mixCentredChannel(
        _ channel: Int, _ used: UsedLanes, into output: UnsafeMutablePointer<Float>,
        _ other: UnsafeMutablePointer<Float>, stereo: Bool, frameCount n: Int
    ) {
        let stride = configuration.maxBlockFrames
        let ramp = mixer.channels[channel].bus
        var after = ramp
        for r in 0..<mixer.roomCount {
            let lane = channel + 16 * r
            if used.centred & (1 << lane) != 0 {
                let bus = mixer.buses + lane * stride
                after = addBus(bus, into: output, ramp: ramp, frameCount: n)
                if stereo { _ = addBus(bus, into: other, ramp: ramp, frameCount: n) }
            }
            if used.sides & (1 << lane) != 0 {
                let sideLeft = mixer.sideBuses + 2 * lane * stride
                after = addBus(sideLeft, into: output, ramp: ramp, frameCount: n)
                _ = addBus(sideLeft + stride, into: other, ramp: ramp, frameCount: n)
            }
        }
        mixer.channels[channel].bus = after
    }

    /// A channel with nothing in its buses this segment: its gain, pan and send ramps jump to
    /// their targets (a silent bus has nothing to click). Thread: render. Real-time safe.
    @_noLocks
    @inline(__always)
    func settleSilentChannel(_ channel: Int) {
        mixer.channels[channel].bus.advance(by: Int.max)
        if pannedChannels & (1 << UInt16(channel)) != 0 {
            mixer.channels[channel].panLeft.advance(by: Int.max)
            mixer.channels[channel].panRight.advance(by: Int.max)
            settlePan(channel: channel)
        }
        if mixer.hasReverb { mixer.channels[channel].send.advance(by: Int.max) }
    }
}

/// Adds `bus` × the channel's gain into `output`, the gain moving as `ramp` says; returns the
/// ramp after these frames. (File scope, as `mixVoice`.)
@_noLocks
@inline(__always)
private func addBus(
    _ bus: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, ramp start: Ramp,
    frameCount n: Int
) -> Ramp {
    var ramp = start
    var k = 0
    if ramp.framesLeft > 0 {
        let m = min(n, ramp.framesLeft)
        for j in 0..<Int32(m) { output[Int(j)] += bus[Int(j)] * (ramp.value + ramp.step * Float(j)) }
        ramp.advance(by: m)
        k = m
    }
    let g = ramp.value
    for j in k..<n { output[j] += bus[j] * g }
    return ramp
}

/// Adds `bus` × the channel's gain × a pan (or send) gain × `scale` into `output`, both gains
/// moving as their ramps say;
/// returns the pan ramp after these frames (the channel's gain ramp moves the same as in
/// `addBus`).
@_noLocks
@inline(__always)
private func addBus(
    _ bus: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, ramp: Ramp,
    pan start: Ramp, scale: Float = 1, frameCount n: Int
) -> Ramp {
    if ramp.framesLeft == 0, start.framesLeft == 0 {
        // Both gains still (nearly always): the same product as below, taken once, so the loop
        // vectorises. `value(at:)` is the target, which a still ramp's value equals.
        let g = ramp.target * start.target * scale
        for j in 0..<n { output[j] += bus[j] * g }
    } else {
        for j in 0..<n {
            output[j] += bus[j] * (ramp.value(at: j) * start.value(at: j) * scale)
        }
    }
    var after = start
    after.advance(by: n)
    return after
}
