// The mix of one segment: voices into their channel buses (one by one in VoiceMixing.swift, four
// at a time in MixBatches.swift), the buses through their gains, pans and sends into the output
// and the room, then the limiter.
import Synchronization

extension Engine {
    /// Mixes one segment: voices into their channel's buses, the buses (with the channel's
    /// CC7 × CC11 × master ramp) into `left` and `right`, the linked limiter over both. Centred
    /// voices share one bus per channel, added to both sides; panned voices have a left and a
    /// right bus. While no voice of the segment is panned, `right` is a copy of `left`, made
    /// after the mono limiter: exactly the mono mix on both. Without `right` (a mono output)
    /// the segment is `left`, or, with panned voices, the average of left and right.
    @_noLocks
    func renderSegment(left output: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount n: Int)
    {
        let stride = configuration.maxBlockFrames
        // Buses are per lane: a channel in a room (lane c + 16 r), one bit each.
        var used: UInt128 = 0, usedSide: UInt128 = 0
        // Voices at a constant gain with a whole segment of sample left are mixed four at a
        // time, in one pass over their bus; the others (ramping or ending) one by one.
        var batch = VoiceBatch(wide: wideMixing)
        // Panned ones likewise, into their channel's left and right buses at once.
        var sides = StereoBatch(wide: wideMixing)
        let hasPanned = hasPannedKeys, hasFiltered = hasTimbre, hasPitchedRegions = hasPitched
        var i = activeCount - 1
        while i >= 0 {
            // With hundreds of voices, each reading a short run of a different sample, the
            // hardware prefetcher cannot follow them and every voice would start with cache
            // misses (3x slower at 64-frame blocks; see docs/design/performance.md). Ask for the data of the voice
            // `prefetchDistance` places ahead while this one mixes.
            if i >= prefetchDistance {
                let ahead = Int(active[i - prefetchDistance])
                prefetch(voices[ahead].frames + voices[ahead].position, byteCount: n * 2 + 64)
            }
            let slot = Int(active[i])
            let lane = Int(voices[slot].channel) | Int(voices[slot].room) << 4
            // A panned voice (filtered or not) goes into its lane's left and right buses.
            let sideLeft = sideBuses + 2 * lane * stride, sideRight = sideLeft + stride
            var isPanned = false // (if, not &&: the operator's autoclosure would retain self)
            if hasPanned, voices[slot].isPanned { isPanned = true }
            if isPanned, usedSide & (1 << lane) == 0 {
                sideLeft.update(repeating: 0, count: n)
                sideRight.update(repeating: 0, count: n)
                usedSide |= 1 << lane
            }
            // Voices mixed one at a time through their own path: pitched ones (transposed,
            // stereo, looped or enveloped: read at their ratio, through their envelope) and
            // filtered ones (velocity timbre), into their channel's bus or, if panned or stereo,
            // its side buses.
            var ownPath = 0 // 1: pitched, 2: filtered
            if hasPitchedRegions, voices[slot].isPitched {
                ownPath = 1
            } else if hasFiltered, voices[slot].isFiltered {
                ownPath = 2
            }
            if ownPath != 0 {
                var left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?
                if isPanned {
                    left = sideLeft
                    right = sideRight
                } else {
                    left = buses + lane * stride
                    right = nil
                    if used & (1 << lane) == 0 {
                        left.update(repeating: 0, count: n)
                        used |= 1 << lane
                    }
                }
                let delay = min(voices[slot].delay, n)
                voices[slot].delay -= delay
                if delay < n {
                    var rightFromDelay: UnsafeMutablePointer<Float>?
                    if let right { rightFromDelay = right + delay }
                    let ended =
                        ownPath == 1
                        ? mixPitchedVoice(slot: slot, left: left + delay, right: rightFromDelay, frameCount: n - delay)
                        : mixFilteredVoice(
                            &voices[slot], left: left + delay, right: rightFromDelay, frameCount: n - delay)
                    if ended { retire(activeIndex: i) }
                }
                i -= 1
                continue
            }
            if isPanned {
                // At the voice's gain × its key's pan gain on each side.
                let delay = voices[slot].delay
                if delay > 0 {
                    voices[slot].delay = 0
                    if delay >= n {
                        voices[slot].delay = delay - n
                    } else if mixPannedVoice(
                        &voices[slot], left: sideLeft + delay, right: sideRight + delay,
                        frameCount: n - delay)
                    {
                        retire(activeIndex: i)
                    }
                } else if voices[slot].gain.framesLeft == 0, voices[slot].position + n <= voices[slot].frameCount {
                    if sides.count > 0, sides.left != sideLeft { sides.flush(frameCount: n) }
                    let g = voices[slot].gain.value
                    sides.add(
                        voices[slot].frames + voices[slot].position, left: g * voices[slot].leftGain,
                        right: g * voices[slot].rightGain, into: sideLeft, sideRight)
                    if sides.count == 4 { sides.flush(frameCount: n) }
                    voices[slot].position += n
                    if voices[slot].position >= voices[slot].frameCount { retire(activeIndex: i) }
                } else if mixPannedVoice(&voices[slot], left: sideLeft, right: sideRight, frameCount: n) {
                    retire(activeIndex: i)
                }
                i -= 1
                continue
            }
            let bus = buses + lane * stride
            if used & (1 << lane) == 0 {
                bus.update(repeating: 0, count: n)
                used |= 1 << lane
            }
            let delay = voices[slot].delay
            if delay > 0 {
                // Started inside this segment: mix from its frame on.
                voices[slot].delay = 0
                if delay >= n {
                    voices[slot].delay = delay - n
                } else if mixVoice(&voices[slot], into: bus + delay, frameCount: n - delay) {
                    retire(activeIndex: i)
                }
            } else if voices[slot].gain.framesLeft == 0, voices[slot].position + n <= voices[slot].frameCount {
                if batch.count > 0, batch.bus != bus { batch.flush(frameCount: n) }
                batch.add(voices[slot].frames + voices[slot].position, gain: voices[slot].gain.value, bus: bus)
                if batch.count == 4 { batch.flush(frameCount: n) }
                voices[slot].position += n
                if voices[slot].position >= voices[slot].frameCount { retire(activeIndex: i) }
            } else if mixVoice(&voices[slot], into: bus, frameCount: n) {
                retire(activeIndex: i)
            }
            i -= 1
        }
        batch.flush(frameCount: n)
        sides.flush(frameCount: n)

        let panned = pannedChannels
        let roomsHere = roomCount
        // The channels with any lane in use, and whether any room has a send this segment.
        var usedChannels: UInt16 = 0, usedSideChannels: UInt16 = 0
        for r in 0..<roomsHere {
            usedChannels |= UInt16(truncatingIfNeeded: used >> (16 * r))
            usedSideChannels |= UInt16(truncatingIfNeeded: usedSide >> (16 * r))
        }
        var sending: UInt8 = 0 // bit r: room r has a send this segment
        // A room's output is stereo: with one room, whenever it is wet; with several (a map of
        // sets, or rooms to choose live), while a wet one has voices or a tail, so that dry
        // bells stay mono whatever rooms are waiting unused.
        var reverberant = hasReverb
        if roomsHere > 1 {
            // (two ifs, not ||: the operator's autoclosure would retain self)
            reverberant = (used | usedSide) & wetLanes != 0
            if !reverberant { reverberant = !roomsAreIdle }
        }
        let stereo = reverberant || usedSideChannels != 0 || panned & (usedChannels | usedSideChannels) != 0
        for r in 0..<roomsHere where roomIsWet[r] { (sendBuses + r * stride).update(repeating: 0, count: n) }
        // (if-let, not ??: the operator's autoclosure would retain self)
        let other: UnsafeMutablePointer<Float>
        if let right { other = right } else { other = segmentRight }
        output.update(repeating: 0, count: n)
        if stereo { other.update(repeating: 0, count: n) }
        for channel in 0..<16 {
            let bit: UInt16 = 1 << channel
            if (usedChannels | usedSideChannels) & bit == 0 {
                settleSilentChannel(channel)
                continue
            }
            let ramp = channels[channel].bus
            if hasReverb, channels[channel].send.framesLeft == 0, channels[channel].send.value == 0 {
                channels[channel].send.advance(by: n) // CC91 at 0: nothing goes into the rooms
            } else if hasReverb {
                // The channel's send into each room its lanes ring in: the lane's mono (a panned
                // voice's two sides averaged) × its gain × CC91, before its pan.
                let send = channels[channel].send
                var after = send
                var sent = false
                for r in 0..<roomsHere where roomIsWet[r] {
                    let lane = channel + 16 * r, sendBus = sendBuses + r * stride
                    if used & (1 << lane) != 0 {
                        after = addBus(buses + lane * stride, into: sendBus, ramp: ramp, pan: send, frameCount: n)
                        sending |= 1 << r
                        sent = true
                    }
                    if usedSide & (1 << lane) != 0 {
                        let sideLeft = sideBuses + 2 * lane * stride
                        after = addBus(sideLeft, into: sendBus, ramp: ramp, pan: send, scale: 0.5, frameCount: n)
                        _ = addBus(sideLeft + stride, into: sendBus, ramp: ramp, pan: send, scale: 0.5, frameCount: n)
                        sending |= 1 << r
                        sent = true
                    }
                }
                if !sent { after.advance(by: n) } // (only dry lanes: the send moves on unheard)
                channels[channel].send = after
            }
            if panned & bit != 0 {
                // CC10 off the centre: each side through its own pan gain too.
                let panLeft = channels[channel].panLeft, panRight = channels[channel].panRight
                var left = panLeft, right = panRight
                for r in 0..<roomsHere {
                    let lane = channel + 16 * r
                    if used & (1 << lane) != 0 {
                        let bus = buses + lane * stride
                        left = addBus(bus, into: output, ramp: ramp, pan: panLeft, frameCount: n)
                        right = addBus(bus, into: other, ramp: ramp, pan: panRight, frameCount: n)
                    }
                    if usedSide & (1 << lane) != 0 {
                        let sideLeft = sideBuses + 2 * lane * stride
                        left = addBus(sideLeft, into: output, ramp: ramp, pan: panLeft, frameCount: n)
                        right = addBus(sideLeft + stride, into: other, ramp: ramp, pan: panRight, frameCount: n)
                    }
                }
                var after = ramp
                after.advance(by: n)
                channels[channel].bus = after
                channels[channel].panLeft = left
                channels[channel].panRight = right
                settlePan(channel: channel)
                continue
            }
            var after = ramp
            for r in 0..<roomsHere {
                let lane = channel + 16 * r
                if used & (1 << lane) != 0 {
                    let bus = buses + lane * stride
                    after = addBus(bus, into: output, ramp: ramp, frameCount: n)
                    if stereo { _ = addBus(bus, into: other, ramp: ramp, frameCount: n) }
                }
                if usedSide & (1 << lane) != 0 {
                    let sideLeft = sideBuses + 2 * lane * stride
                    after = addBus(sideLeft, into: output, ramp: ramp, frameCount: n)
                    _ = addBus(sideLeft + stride, into: other, ramp: ramp, frameCount: n)
                }
            }
            channels[channel].bus = after
        }
        for r in 0..<roomsHere where roomIsWet[r] {
            rooms[r].process(
                input: sendBuses + r * stride, left: output, right: other, frameCount: n,
                inputIsSilent: sending & (1 << r) == 0)
        }
        if stereo {
            limit(left: output, right: other, frameCount: n)
            if right == nil {
                for j in 0..<n { output[j] = (output[j] + other[j]) * 0.5 }
            }
        } else {
            limit(output, frameCount: n)
            if let right { for j in 0..<n { right[j] = output[j] } }
        }
    }
}

extension Engine {
    /// Whether a segment would come out as zeros and change nothing but the channels' gains:
    /// no voice, the room exactly empty (`Reverb.idle`: its lines cleared, not just quiet), and
    /// the limiter at rest (gain exactly 1; while it recovers, each frame moves it). Then
    /// `render` skips the mix (`restSegment`), and its output and every state after it are bit
    /// for bit those of the mix it skipped (the offline and JACK tests compare them). Thread: render. Real-time safe.
    var isAtRest: Bool {
        @_noLocks get {
            // (two ifs, not ||: the operator's autoclosure would retain self)
            if activeCount != 0 { return false }
            if limiterGain != 1 { return false }
            if !roomsAreIdle { return false }
            return true
        }
    }

    /// A segment at rest (`isAtRest`), not mixed: zeros out, and the channels' gains settled as
    /// a mixed silent segment settles them, so the next sound is mixed exactly as if this
    /// segment had been. Thread: render. Real-time safe.
    @_noLocks
    func restSegment(left output: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?, frameCount n: Int) {
        output.update(repeating: 0, count: n)
        if let right { right.update(repeating: 0, count: n) }
        for channel in 0..<16 { settleSilentChannel(channel) }
    }

    /// A channel with nothing in its buses this segment: its gain, pan and send ramps jump to
    /// their targets (a silent bus has nothing to click). Thread: render. Real-time safe.
    @_noLocks
    @inline(__always)
    func settleSilentChannel(_ channel: Int) {
        channels[channel].bus.advance(by: Int.max)
        if pannedChannels & (1 << UInt16(channel)) != 0 {
            channels[channel].panLeft.advance(by: Int.max)
            channels[channel].panRight.advance(by: Int.max)
            settlePan(channel: channel)
        }
        if hasReverb { channels[channel].send.advance(by: Int.max) }
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
