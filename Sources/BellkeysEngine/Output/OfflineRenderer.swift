import BellkeysModel

/// Renders a whole performance as fast as possible, through the same queue and `render` that
/// the live path uses. Thread: one thread does everything (it is producer and renderer).
///
/// - Parameters:
///   - events: in frame order.
///   - endFrame: the performance's own end (a MIDI file's end of track); output is at least
///     this long, and goes on until every voice has ended and the reverb's tail has reached
///     digital zero (to within one 64-frame block).
///   - write: receives the mono output in order.
/// - Returns: the number of frames written.
public func renderOffline<E: Error>(
    engine: Engine, events: [EngineEvent], endFrame: Int64, chunkFrames: Int = 4_096,
    write: (UnsafeBufferPointer<Float>) throws(E) -> Void
) throws(E) -> Int64 {
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames)
    defer { buffer.deallocate() }
    return try renderOfflineChunks(engine: engine, events: events, endFrame: endFrame, chunkFrames: chunkFrames) {
        (frames: Int) throws(E) in
        engine.render(into: buffer, frameCount: frames)
        try write(UnsafeBufferPointer(start: buffer, count: frames))
    }
}

/// `renderOffline` for a stereo (or wider) output: `write` receives the left and the right
/// channel of each chunk (equal while no bell is panned).
public func renderOffline<E: Error>(
    engine: Engine, events: [EngineEvent], endFrame: Int64, chunkFrames: Int = 4_096,
    write: (UnsafeBufferPointer<Float>, UnsafeBufferPointer<Float>) throws(E) -> Void
) throws(E) -> Int64 {
    let left = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames)
    defer {
        left.deallocate()
        right.deallocate()
    }
    return try renderOfflineChunks(engine: engine, events: events, endFrame: endFrame, chunkFrames: chunkFrames) {
        (frames: Int) throws(E) in
        engine.render(left: left, right: right, frameCount: frames)
        try write(UnsafeBufferPointer(start: left, count: frames), UnsafeBufferPointer(start: right, count: frames))
    }
}

/// The schedule both share: queues the events ahead of the render, and asks `render` for each
/// chunk's frame count until the performance is over and every voice has ended.
private func renderOfflineChunks<E: Error>(
    engine: Engine, events: [EngineEvent], endFrame: Int64, chunkFrames: Int,
    render: (Int) throws(E) -> Void
) throws(E) -> Int64 {
    var next = 0
    let start = engine.currentFrame
    while true {
        while next < events.count, engine.events.push(events[next]) { next += 1 }
        let now = engine.currentFrame
        var target = now + Int64(chunkFrames)
        if next < events.count {
            target = min(target, max(events[next].frame, now + 1)) // queue full: render up to it
        } else if now < endFrame {
            target = min(target, endFrame)
        } else if engine.events.count == 0, engine.activeVoiceCount == 0, engine.reverbIsQuiet {
            break
        } else {
            target = now + 64 // tail: stop soon after the last voice
        }
        try render(Int(target - now))
    }
    return engine.currentFrame - start
}
