/// A linear move of a gain from its current value to a target over a fixed number of frames.
/// Used for every gain change, so no change is ever a step.
struct Ramp {
    /// Gain at the next frame to render.
    var value: Float
    var target: Float
    /// Change per frame while `framesLeft > 0`.
    var step: Float
    var framesLeft: Int

    @_noLocks
    init(_ value: Float) {
        self.value = value
        self.target = value
        self.step = 0
        self.framesLeft = 0
    }

    /// Starts a move to `target` that arrives after exactly `frames` frames (at once if 0).
    @_noLocks
    mutating func move(to target: Float, frames: Int) {
        self.target = target
        if frames <= 0 || value == target {
            value = target
            step = 0
            framesLeft = 0
        } else {
            step = (target - value) / Float(frames)
            framesLeft = frames
        }
    }

    /// The gain `frames` frames after the next one to render (the target once the move ends),
    /// without moving the ramp: what `advance(by: frames)` would make `value`, but from the
    /// start of the move, so a loop over a block does not accumulate.
    @_noLocks
    @inline(__always)
    func value(at frames: Int) -> Float {
        frames < framesLeft ? value + step * Float(frames) : target
    }

    /// Moves the ramp on by `frames`. The target is reached exactly, never by accumulation.
    @_noLocks
    mutating func advance(by frames: Int) {
        if frames >= framesLeft {
            value = target
            step = 0
            framesLeft = 0
        } else {
            framesLeft -= frames
            value = target - step * Float(framesLeft)
        }
    }
}
