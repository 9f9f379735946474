import BellkeysEngine

extension FrameClock {
    /// Turns arrival times into output frames. Thread: control.
    public struct Stamper: Sendable {
        public let sampleRate: Int
        /// Frames between the frame the clock line gives for an arrival and the frame the
        /// event is placed at: one period (a JACK server may change the period while playing).
        public var latencyFrames: Int64
        private var lastFrame: Int64 = 0

        public init(sampleRate: Int, periodFrames: Int) {
            self.sampleRate = sampleRate
            latencyFrames = Int64(periodFrames)
        }

        /// The frame for an event that arrived at `arrival`, given a point of the clock line
        /// (the render thread's raw reading: a frame and the monotonic nanoseconds it began at).
        /// Frames never go backwards, so the engine's queue stays in order.
        public mutating func frame(arrival: MonotonicInstant, clock: (frame: Int64, nanoseconds: UInt64)?) -> Int64 {
            guard let clock else { return lastFrame }
            let elapsed = Double(Int64(bitPattern: arrival.nanoseconds &- clock.nanoseconds))
            let frame = clock.frame + latencyFrames + Int64((elapsed * Double(sampleRate) / 1e9).rounded())
            lastFrame = max(lastFrame, frame)
            return lastFrame
        }
    }
}
