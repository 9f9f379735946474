// The mix of one segment, in named steps: the voices into their lanes' buses (`mixActiveVoices`; one
// by one in VoiceMixing.swift and PitchedMixing.swift, four at a time in MixBatches.swift), the
// buses through their channel's gain, pan and send into the output and the rooms
// (`mixChannels`), then the rooms and the limiter (`finishSegment`).
import Synchronization

/// The lanes (a channel in a room: lane c + 16 r, one bit each) whose buses hold voices this
/// segment: centred voices' buses (`centred`) and panned voices' left and right buses (`sides`).
struct UsedLanes {
    var centred: UInt128 = 0
    var sides: UInt128 = 0
    /// The lanes whose voices' own sends (`Mixer.voiceSends`) hold something this segment.
    var sent: UInt128 = 0
    /// The channels with such a lane in any room (bit c: channel c), of centred voices and of
    /// panned ones: folded once from the lanes when the voices are mixed (`foldChannels`).
    var centredChannels: UInt16 = 0
    var sideChannels: UInt16 = 0

    /// Folds the lanes of `rooms` rooms into their channels.
    @_noLocks
    @inline(__always)
    mutating func foldChannels(rooms: Int) {
        for r in 0..<rooms {
            centredChannels |= UInt16(truncatingIfNeeded: centred >> (16 * r))
            sideChannels |= UInt16(truncatingIfNeeded: sides >> (16 * r))
        }
    }
}

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
        let used = mixActiveVoices(frameCount: n)
        let stereo = segmentIsStereo(used)
        // (if-let, not ??: the operator's autoclosure would retain self)
        let other: UnsafeMutablePointer<Float>
        if let right { other = right } else { other = mixer.segmentRight }
        let sending = mixChannels(used, into: output, other, stereo: stereo, frameCount: n)
        finishSegment(left: output, right: right, other: other, stereo: stereo, sending: sending, frameCount: n)
    }

    /// Every active voice into its lane's buses for `n` frames, from the last started to the
    /// first; a voice that ends is retired. Returns the lanes used.
    @_noLocks
    @inline(__always)
    func mixActiveVoices(frameCount n: Int) -> UsedLanes {
        let stride = configuration.maxBlockFrames
        var used = UsedLanes()
        // Voices at a constant gain with a whole segment of sample left are mixed four at a
        // time, in one pass over their bus; the others (ramping or ending) one by one.
        var batch = VoiceBatch(wide: wideMixing)
        // Panned ones likewise, into their channel's left and right buses at once.
        var sides = StereoBatch(wide: wideMixing)
        let hasPanned = table.hasPannedKeys, hasFiltered = table.hasTimbre, hasPitchedRegions = table.hasPitched
        let hasSends = table.hasVoiceSends
        var i = activeCount - 1
        while i >= 0 {
            // With hundreds of voices, each reading a short run of a different sample, the
            // hardware prefetcher cannot follow them and every voice would start with cache
            // misses (3x slower at 64-frame blocks; see docs/design/performance.md). Ask for the data of the voice
            // `prefetchDistance` places ahead while this one mixes.
            if i >= pool.prefetchDistance {
                let ahead = Int(pool.active[i - pool.prefetchDistance])
                prefetch(pool.voices[ahead].frames + pool.voices[ahead].position, byteCount: n * 2 + 64)
            }
            let slot = Int(pool.active[i])
            let lane = Int(pool.voices[slot].channel) | Int(pool.voices[slot].room) << 4
            // A panned voice (filtered or not) goes into its lane's left and right buses.
            let sideLeft = mixer.sideBuses + 2 * lane * stride, sideRight = sideLeft + stride
            var isPanned = false // (if, not &&: the operator's autoclosure would retain self)
            if hasPanned, pool.voices[slot].isPanned { isPanned = true }
            if isPanned, used.sides & (1 << lane) == 0 {
                sideLeft.update(repeating: 0, count: n)
                sideRight.update(repeating: 0, count: n)
                used.sides |= 1 << lane
            }
            // Voices mixed one at a time through their own path: pitched ones (transposed,
            // stereo, looped or enveloped: read at their ratio, through their envelope) and
            // filtered ones (velocity timbre), into their channel's bus or, if panned or stereo,
            // its side buses.
            var ownPath = 0 // 1: pitched, 2: filtered
            if hasPitchedRegions, pool.voices[slot].isPitched {
                ownPath = 1
            } else if hasFiltered, pool.voices[slot].isFiltered {
                ownPath = 2
            }
            if ownPath != 0 {
                var left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?
                if isPanned {
                    left = sideLeft
                    right = sideRight
                } else {
                    left = mixer.buses + lane * stride
                    right = nil
                    if used.centred & (1 << lane) == 0 {
                        left.update(repeating: 0, count: n)
                        used.centred |= 1 << lane
                    }
                }
                // A voice with a send of its own (a pitched region's) in a wet room adds it to its
                // lane's send bus.
                var send: UnsafeMutablePointer<Float>?
                if hasSends, ownPath == 1, table.regions[Int(pool.voices[slot].region)].reverbSend != 0,
                    mixer.roomIsWet[Int(pool.voices[slot].room)]
                {
                    send = mixer.voiceSends + lane * stride
                    if used.sent & (1 << lane) == 0 {
                        send?.update(repeating: 0, count: n)
                        used.sent |= 1 << lane
                    }
                }
                mixOnItsOwnPath(
                    slot: slot, activeIndex: i, pitched: ownPath == 1, left: left, right: right, send: send,
                    frameCount: n)
            } else if isPanned {
                mixPanned(slot: slot, activeIndex: i, left: sideLeft, right: sideRight, batch: &sides, frameCount: n)
            } else {
                let bus = mixer.buses + lane * stride
                if used.centred & (1 << lane) == 0 {
                    bus.update(repeating: 0, count: n)
                    used.centred |= 1 << lane
                }
                mixCentred(slot: slot, activeIndex: i, into: bus, batch: &batch, frameCount: n)
            }
            i -= 1
        }
        batch.flush(frameCount: n)
        sides.flush(frameCount: n)
        used.foldChannels(rooms: mixer.roomCount)
        return used
    }

    /// A pitched or filtered voice, alone, into `left` (its lane's bus, or its left side bus),
    /// `right` (its right side bus, if panned) and `send` (its lane's send bus, if it has a send
    /// of its own), from its delay on.
    @_noLocks
    @_transparent
    func mixOnItsOwnPath(
        slot: Int, activeIndex i: Int, pitched: Bool, left: UnsafeMutablePointer<Float>,
        right: UnsafeMutablePointer<Float>?, send: UnsafeMutablePointer<Float>?, frameCount n: Int
    ) {
        let delay = min(pool.voices[slot].delay, n)
        pool.voices[slot].delay -= delay
        if delay < n {
            var rightFromDelay: UnsafeMutablePointer<Float>?, sendFromDelay: UnsafeMutablePointer<Float>?
            if let right { rightFromDelay = right + delay }
            if let send { sendFromDelay = send + delay }
            let ended =
                pitched
                ? mixPitchedVoice(
                    slot: slot, left: left + delay, right: rightFromDelay, send: sendFromDelay, frameCount: n - delay)
                : mixFilteredVoice(&pool.voices[slot], left: left + delay, right: rightFromDelay, frameCount: n - delay)
            if ended { retire(activeIndex: i) }
        }
    }

    /// A panned voice into its lane's side buses, at its gain × its key's pan gain on each
    /// side: four at a time (`batch`) when it holds still for the whole segment.
    @_noLocks
    @_transparent
    func mixPanned(
        slot: Int, activeIndex i: Int, left sideLeft: UnsafeMutablePointer<Float>,
        right sideRight: UnsafeMutablePointer<Float>, batch sides: inout StereoBatch, frameCount n: Int
    ) {
        let delay = pool.voices[slot].delay
        if delay > 0 {
            pool.voices[slot].delay = 0
            if delay >= n {
                pool.voices[slot].delay = delay - n
            } else if mixPannedVoice(
                &pool.voices[slot], left: sideLeft + delay, right: sideRight + delay,
                frameCount: n - delay)
            {
                retire(activeIndex: i)
            }
        } else if pool.voices[slot].gain.framesLeft == 0, pool.voices[slot].position + n <= pool.voices[slot].frameCount
        {
            if sides.count > 0, sides.left != sideLeft { sides.flush(frameCount: n) }
            let g = pool.voices[slot].gain.value
            sides.add(
                pool.voices[slot].frames + pool.voices[slot].position, left: g * pool.voices[slot].leftGain,
                right: g * pool.voices[slot].rightGain, into: sideLeft, sideRight)
            if sides.count == 4 { sides.flush(frameCount: n) }
            pool.voices[slot].position += n
            if pool.voices[slot].position >= pool.voices[slot].frameCount { retire(activeIndex: i) }
        } else if mixPannedVoice(&pool.voices[slot], left: sideLeft, right: sideRight, frameCount: n) {
            retire(activeIndex: i)
        }
    }

    /// A centred voice into its lane's bus: four at a time (`batch`) when it holds still for the
    /// whole segment, else alone (started inside the segment: from its frame on).
    @_noLocks
    @_transparent
    func mixCentred(
        slot: Int, activeIndex i: Int, into bus: UnsafeMutablePointer<Float>, batch: inout VoiceBatch,
        frameCount n: Int
    ) {
        let delay = pool.voices[slot].delay
        if delay > 0 {
            pool.voices[slot].delay = 0
            if delay >= n {
                pool.voices[slot].delay = delay - n
            } else if mixVoice(&pool.voices[slot], into: bus + delay, frameCount: n - delay) {
                retire(activeIndex: i)
            }
        } else if pool.voices[slot].gain.framesLeft == 0, pool.voices[slot].position + n <= pool.voices[slot].frameCount
        {
            if batch.count > 0, batch.bus != bus { batch.flush(frameCount: n) }
            batch.add(
                pool.voices[slot].frames + pool.voices[slot].position, gain: pool.voices[slot].gain.value, bus: bus)
            if batch.count == 4 { batch.flush(frameCount: n) }
            pool.voices[slot].position += n
            if pool.voices[slot].position >= pool.voices[slot].frameCount { retire(activeIndex: i) }
        } else if mixVoice(&pool.voices[slot], into: bus, frameCount: n) {
            retire(activeIndex: i)
        }
    }

    /// The wet rooms over their sends (into `left` and `other`), then the limiter: linked over
    /// both sides when `stereo` (a mono output then takes their average), else over `left`,
    /// copied to `right` if there is one.
    @_noLocks
    @inline(__always)
    func finishSegment(
        left output: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>?,
        other: UnsafeMutablePointer<Float>, stereo: Bool, sending: UInt8, frameCount n: Int
    ) {
        for r in 0..<mixer.roomCount where mixer.roomIsWet[r] {
            mixer.rooms[r].process(
                input: mixer.sendBuses + r * configuration.maxBlockFrames, left: output, right: other, frameCount: n,
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
}
