import BellkeysModel
import Synchronization

/// What the render thread runs for a sound device: one period at a time, the current engine
/// (plus, after a map reload, the previous one until its bells have rung out), converted to
/// the device's interleaved format.
///
/// Engines change hands without locks. The mixer keeps a strong reference to every engine it is
/// given in a list only the control thread touches, until `takeRetired` hands it back; the
/// render thread holds them unretained, so it never retains, releases or frees an object.
///
/// Threads: `renderPeriod`, `beginPeriod`, `playNow` and `render` render only; `install`, `takeRetired` the control thread (the
/// engines' event producer); the rest any.
public final class LiveMixer: @unchecked Sendable {
    public let sampleRate: Int
    public let channels: Int
    public let format: OutputSampleFormat
    public let maximumPeriodFrames: Int
    /// Frame/time pairs for stamping live events; published at the start of each period.
    public let clock: FrameClock

    /// Strong references to the engines in use. Thread: control only.
    private var owned: [Engine]
    private var current: Unmanaged<Engine>
    private var retiring: Unmanaged<Engine>?
    /// An engine waiting to be installed (its opaque pointer), or 0.
    private let incoming = Atomic<UInt>(0)
    /// An engine the render thread has finished with, or 0.
    private let retired = Atomic<UInt>(0)
    /// The period's left and right channels, and the same for the engine ringing out after a
    /// reload.
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchRight: UnsafeMutablePointer<Float>
    /// Interleaved output of the last `renderPeriod`.
    public let output: UnsafeMutableRawPointer
    /// Whether `output` holds only zeros (the engines were at rest). Thread: render.
    private var outputIsSilent = true
    /// `render` calls finished, and the frame after the last one's, each stored (releasing)
    /// after the engines' own counters: what a reader sees of the engines (voices, the room)
    /// after acquiring these is at least that render's. Thread: render writes; any reads.
    public let completedRenders = Atomic<Int>(0)
    public let renderedThroughFrame = Atomic<Int64>(0)
    /// Frame that the next period starts at.
    public private(set) var frame: Int64 = 0
    /// Frames of the period under way (the last `beginPeriod`'s), 0 before the first: the
    /// latency of stamped live events (`FrameClock.Stamper`). A JACK server may change it.
    public let periodFrames = Atomic<Int>(0)
    /// The events `playNow` played, for the control thread: here the render thread is the
    /// producer and the control thread the consumer (`LivePlayer.notePlayedNow`).
    public let played: EventQueue
    /// The frame the engine playing now started at (0 for the first; set when the render thread
    /// takes over an engine handed over by `install`), or -1 while one waits to be taken.
    public let engineStartFrame = Atomic<Int64>(0)
    /// Whether `playNow` plays what it is given: cleared on quitting, so that no bell starts
    /// while the rest fade out. Thread: any.
    public let takesRenderThreadEvents = Atomic<Bool>(true)
    /// Events `playNow` played that `played` had no room for (the control thread did not take
    /// them for 1,024 events): they sounded, but were not kept for the loop or held notes.
    public let unreportedPlays = Atomic<Int>(0)

    /// Thread: control, before rendering starts.
    public init(engine: Engine, channels: Int, format: OutputSampleFormat, maximumPeriodFrames: Int) {
        precondition(channels > 0 && maximumPeriodFrames > 0)
        sampleRate = engine.configuration.sampleRate
        self.channels = channels
        self.format = format
        self.maximumPeriodFrames = maximumPeriodFrames
        owned = [engine]
        current = Unmanaged.passUnretained(engine)
        clock = FrameClock(sampleRate: engine.configuration.sampleRate)
        played = EventQueue(capacity: 1_024)
        left = .allocate(capacity: maximumPeriodFrames)
        left.initialize(repeating: 0, count: maximumPeriodFrames)
        scratch = .allocate(capacity: maximumPeriodFrames)
        scratch.initialize(repeating: 0, count: maximumPeriodFrames)
        right = .allocate(capacity: maximumPeriodFrames)
        right.initialize(repeating: 0, count: maximumPeriodFrames)
        scratchRight = .allocate(capacity: maximumPeriodFrames)
        scratchRight.initialize(repeating: 0, count: maximumPeriodFrames)
        output = .allocate(byteCount: maximumPeriodFrames * channels * 4, alignment: 16)
        output.initializeMemory(as: UInt8.self, repeating: 0, count: maximumPeriodFrames * channels * 4)
    }

    deinit {
        left.deallocate()
        scratch.deallocate()
        right.deallocate()
        scratchRight.deallocate()
        output.deallocate()
    }

    /// Bytes of one interleaved frame in `output`.
    public var frameByteCount: Int { channels * format.deviceByteCount }

    /// Renders the next `frameCount` frames into `output`. `nanoseconds` is the monotonic
    /// time now, published with the period's first frame for `FrameClock.Stamper`.
    /// The same as `beginPeriod` then `render`. Thread: render. Real-time safe.
    @_noLocks
    public func renderPeriod(frameCount: Int, nanoseconds: UInt64) {
        beginPeriod(frameCount: frameCount, nanoseconds: nanoseconds)
        render(frameCount: frameCount)
    }

    /// Starts a period of `frameCount` frames (any length: `render` may take it in parts) whose
    /// first frame is `frame`, played at `nanoseconds` (monotonic): publishes the pair on
    /// `clock` and the period's length in `periodFrames`, and starts an engine handed over by
    /// `install`. Then `playNow` may place events inside the period. Returns the period's first
    /// frame. Thread: render. Real-time safe.
    @_noLocks
    @discardableResult
    public func beginPeriod(frameCount: Int, nanoseconds: UInt64) -> Int64 {
        periodFrames.relaxedStore(frameCount)
        clock.publish(frame: frame, nanoseconds: nanoseconds)
        if retiring == nil {
            let bits = incoming.acquiringLoad()
            if bits != 0, let pointer = UnsafeMutableRawPointer(bitPattern: bits) {
                incoming.relaxedStore(0)
                retiring = current
                current = Unmanaged<Engine>.fromOpaque(pointer)
                let startFrame = frame
                current._withUnsafeGuaranteedRef { $0.start(atFrame: startFrame) }
                engineStartFrame.releasingStore(startFrame)
            }
        }
        return frame
    }

    /// Plays `event` at its frame, which lies in the period begun (an event the render thread
    /// read itself: a JACK MIDI event at its offset), with no latency added: the engine playing
    /// now takes it, and so does the map before a reload while its bells ring out, unless it
    /// `strikes`. It is also handed to the control thread through `played`, so that what it
    /// holds, the controllers and the loop are kept as for any input. Events come in frame
    /// order. Nothing is played once `takesRenderThreadEvents` is cleared (quitting). Thread:
    /// render. Real-time safe.
    @_noLocks
    public func playNow(_ event: EngineEvent) {
        guard takesRenderThreadEvents.relaxedLoad() else { return }
        _ = current._withUnsafeGuaranteedRef { $0.playNow(event) }
        if let old = retiring, !event.strikes {
            _ = old._withUnsafeGuaranteedRef { $0.playNow(event) }
        }
        if !played.push(event) { unreportedPlays.relaxedAdd(1) }
    }

    /// Renders the next `frameCount` frames (at most `maximumPeriodFrames`) of the period begun
    /// into `output`. Thread: render. Real-time safe.
    @_noLocks
    public func render(frameCount: Int) {
        // Left and right for every device: `interleave` gives a mono one their average, which
        // is the mono mix itself while no bell is panned.
        let out = left, outRight = right
        var silent = current._withUnsafeGuaranteedRef { engine in
            engine.render(left: out, right: outRight, frameCount: frameCount)
            return engine.renderedOnlySilence
        }
        if let old = retiring {
            silent = false
            let extra = scratch, extraRight = scratchRight
            old._withUnsafeGuaranteedRef { $0.render(left: extra, right: extraRight, frameCount: frameCount) }
            for i in 0..<frameCount {
                out[i] += extra[i]
                outRight[i] += extraRight[i]
            }
            let finished = old._withUnsafeGuaranteedRef { $0.isSilent() }
            if finished, retired.acquiringLoad() == 0 {
                retired.releasingStore(UInt(bitPattern: old.toOpaque()))
                retiring = nil
            }
        }
        if silent {
            // Zeros in every format: written once, then left as they are while all is quiet.
            if !outputIsSilent {
                output.initializeMemory(as: UInt8.self, repeating: 0, count: maximumPeriodFrames * channels * 4)
                outputIsSilent = true
            }
        } else {
            interleave(
                left: out, right: outRight, frameCount: frameCount, channels: channels, format: format, into: output)
            outputIsSilent = false
        }
        frame += Int64(frameCount)
        renderedThroughFrame.releasingStore(frame)
        completedRenders.releasingAdd(1)
    }

    /// Renders the period begun, `frameCount` frames (any number: taken in parts of at most
    /// `maximumPeriodFrames`), into one float buffer per channel (`channelBuffers[c]`, each of
    /// `frameCount` floats), as a JACK process callback needs them. The channels are those of
    /// the interleaved `output` (the same conversion), and `tap`, if given, gets the interleaved
    /// frames. The format must be `.f32`. Thread: render. Real-time safe.
    @_noLocks
    public func render(
        frameCount: Int, into channelBuffers: UnsafePointer<UnsafeMutablePointer<Float>>,
        tap: Unmanaged<AudioTap>?
    ) {
        let interleaved = output.assumingMemoryBound(to: Float.self)
        let channelCount = channels
        var done = 0
        while done < frameCount {
            let part = min(frameCount - done, maximumPeriodFrames)
            render(frameCount: part)
            for channel in 0..<channelCount {
                let destination = channelBuffers[channel] + done
                if outputIsSilent {
                    destination.update(repeating: 0, count: part)
                } else {
                    for i in 0..<part { destination[i] = interleaved[i * channelCount + channel] }
                }
            }
            if let tap {
                let source = output
                _ = tap._withUnsafeGuaranteedRef { $0.push(source, frameCount: part) }
            }
            done += part
        }
    }

    /// Hands `engine` to the render thread, which starts it at its next period; the engine
    /// playing now rings out alongside it and then comes back through `takeRetired`.
    /// Returns false, changing nothing, while an earlier hand-over is still under way.
    /// Thread: control.
    public func install(_ engine: Engine) -> Bool {
        guard !owned.contains(where: { $0 === engine }) else { return false }
        owned.append(engine)
        engineStartFrame.relaxedStore(-1)
        if incoming.compareExchange(
            expected: 0, desired: UInt(bitPattern: Unmanaged.passUnretained(engine).toOpaque()),
            ordering: .releasing
        ).exchanged {
            return true
        }
        owned.removeLast()
        return false
    }

    /// Whether an engine handed over by `install` has not yet been started. Thread: any.
    public var installPending: Bool { incoming.acquiringLoad() != 0 }

    /// The engine the render thread has finished with, if any; the caller may release it.
    /// Thread: control.
    public func takeRetired() -> Engine? {
        let bits = retired.acquiringExchange(0)
        guard bits != 0, let pointer = UnsafeMutableRawPointer(bitPattern: bits) else { return nil }
        let engine = Unmanaged<Engine>.fromOpaque(pointer).takeUnretainedValue()
        owned.removeAll { $0 === engine }
        return engine
    }
}
