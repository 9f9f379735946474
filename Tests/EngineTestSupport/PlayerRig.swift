import BellkeysControl
import BellkeysEngine

/// A player over a real engine and mixer, played through the in-memory output: 64-frame
/// periods of mono f32, period k pulled at exactly its time on a 48 kHz line (frame f at
/// f × 10⁹ / 48,000 ns), so a message arriving at frame f's time plays at frame f + 64.
public final class Rig {
    public let output = MemoryOutput(sampleRate: 48_000, channels: 1, format: .f32, periodFrames: 64)
    public let mixer: LiveMixer
    public let player: LivePlayer
    /// Every frame played so far.
    public var out: [Float] { output.floats }

    public init(_ engine: Engine) {
        mixer = LiveMixer(engine: engine, channels: 1, format: .f32, maximumPeriodFrames: 64)
        player = LivePlayer(mixer: mixer, engine: engine, periodFrames: 64, masterDecibels: 0)
        _ = output.start(pulling: mixer, tap: nil, priority: 70)
    }

    public static func nanoseconds(_ frame: Int) -> UInt64 { UInt64((Double(frame) * 1e9 / 48_000).rounded()) }

    /// Renders periods until frame `frame` has been rendered (the control thread wakes in the
    /// period after it), letting the player do its wake-up work; returns that frame's time.
    public func at(_ frame: Int) -> UInt64 {
        while Int(mixer.frame) <= frame {
            player.update(arrival: Self.nanoseconds(Int(mixer.frame)))
            output.pull(atNanoseconds: Self.nanoseconds(Int(mixer.frame)))
        }
        return Self.nanoseconds(frame)
    }

    /// Frames in `range` that are not silent.
    public func sounding(_ range: Range<Int>) -> [Int] {
        let out = out
        return range.filter { out[$0] != 0 }
    }
}
