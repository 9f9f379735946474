/// Renders a whole performance as fast as possible, through the same queue and `render` that
/// the live path uses. Thread: one thread does everything (it is producer and renderer).
///
/// - Parameters:
///   - events: in frame order.
///   - endFrame: the performance's own end (a MIDI file's end of track); output is at least
///     this long, and goes on until every voice has ended (to within one 64-frame block).
///   - write: receives the mono output in order.
/// - Returns: the number of frames written.
public func renderOffline<E: Error>(
    engine: Engine, events: [EngineEvent], endFrame: Int64, chunkFrames: Int = 4_096,
    write: (UnsafeBufferPointer<Float>) throws(E) -> Void
) throws(E) -> Int64 {
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunkFrames)
    defer { buffer.deallocate() }
    var next = 0
    let start = engine.currentFrame
    while true {
        while next < events.count, engine.events.push(events[next]) { next += 1 }
        let now = engine.currentFrame
        var target = now + Int64(chunkFrames)
        if next < events.count {
            target = min(target, max(events[next].frame, now + 1))       // queue full: render up to it
        } else if now < endFrame {
            target = min(target, endFrame)
        } else if engine.events.count == 0, engine.activeVoiceCount == 0 {
            break
        } else {
            target = now + 64                                             // tail: stop soon after the last voice
        }
        let frames = Int(target - now)
        engine.render(into: buffer, frameCount: frames)
        try write(UnsafeBufferPointer(start: buffer, count: frames))
    }
    return engine.currentFrame - start
}
