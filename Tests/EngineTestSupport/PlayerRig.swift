import BellkeysControl
import BellkeysEngine
import BellkeysModel

/// A player over a real engine and mixer, played through the in-memory output: 64-frame
/// periods of mono f32, period k pulled at exactly its time on a 48 kHz line (frame f at
/// f × 10⁹ / 48,000 ns), so a message arriving at frame f's time plays at frame f + 64.
public final class Rig {
    public let output = MemoryOutput(sampleRate: 48_000, channels: 1, format: .f32, periodFrames: 64)
    public let mixer: LiveMixer
    public let player: LivePlayer
    /// Every frame played so far.
    public var out: [Float] { output.floats }

    /// `room`: the room `engine` was built with, as the player is told it.
    public init(_ engine: Engine, room: ReverbPreset = .off) {
        mixer = LiveMixer(engine: engine, channels: 1, format: .f32, maximumPeriodFrames: 64)
        player = LivePlayer(mixer: mixer, engine: engine, periodFrames: 64, masterDecibels: 0, room: room)
        _ = output.start(pulling: mixer, tap: nil, priority: 70)
    }

    /// Frame `frame`'s time on the line, as the render thread reads it (raw nanoseconds).
    public static func nanoseconds(_ frame: Int) -> UInt64 { UInt64((Double(frame) * 1e9 / 48_000).rounded()) }

    /// Frame `frame`'s time on the line, as an input stamps an arrival.
    public static func instant(_ frame: Int) -> MonotonicInstant { MonotonicInstant(nanoseconds: nanoseconds(frame)) }

    /// Renders periods until frame `frame` has been rendered (the control thread wakes in the
    /// period after it), letting the player do its wake-up work; returns that frame's time.
    public func at(_ frame: Int) -> MonotonicInstant {
        while Int(mixer.frame) <= frame {
            player.update(arrival: Self.instant(Int(mixer.frame)))
            output.pull(atNanoseconds: Self.nanoseconds(Int(mixer.frame)))
        }
        return Self.instant(frame)
    }

    /// Frames in `range` that are not silent.
    public func sounding(_ range: Range<Int>) -> [Int] {
        let out = out
        return range.filter { out[$0] != 0 }
    }
}

/// Long constant bells (`level`, 30,000 frames) for notes 60 up, damped over 48 frames on
/// release. (The tests' engines limit at 1.0: bells summed past it would be limited.)
public func longBells(_ count: Int, level: Float = 1) -> Engine {
    makeEngine(
        samples: (0..<count).map { _ in constant(level, 30_000) },
        keys: (0..<count).map { KeySettings(note: 60 + $0, sampleIndex: $0, noteOff: release48) })
}

/// The 13 impulse bells (note n's impulse n − 60 frames into it), ringing.
public func impulseBells() -> Engine {
    let (samples, keys) = impulseKeys()
    return makeEngine(samples: samples, keys: keys)
}

/// A session that keeps what the inputs asked of it through the player, in order.
public final class RecordingSession: SessionRequestHandler {
    public private(set) var requests: [SessionRequest] = []
    public init() {}
    public func carryOut(_ request: SessionRequest) { requests.append(request) }
}
