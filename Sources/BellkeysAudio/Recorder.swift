import BellkeysEngine
import BellkeysFormats
import BellkeysSystem
import CSndFile
import Glibc
import Synchronization

/// `--record FILE.wav`: writes exactly the bytes the render thread played, in the device's
/// own format (so the file equals the sound, bit for bit), from a thread of its own.
///
/// The render thread pushes each period into an `AudioTap` after writing it to the device and
/// never waits; this thread drains the tap every 20 ms into the file. The WAV header is
/// rewritten every second, so the file is a valid WAV at any moment, up to the last second,
/// even if the process is killed; `finish` writes the rest and the final header.
///
/// Thread: `init`, `start`, `finish` the control thread; `tap.push` the render thread.
public final class Recorder: @unchecked Sendable {
    public let path: String
    public let tap: AudioTap
    private let file: OpaquePointer
    private let stopRequested = Atomic<Bool>(false)
    /// Frames written to the file so far.
    public let framesWritten = Atomic<Int>(0)
    /// The first write error (errno-style text), if any: the recording stopped there.
    private var writeFailure: String?
    private var thread: pthread_t?

    /// Creates `path` (refusing to replace a file that exists) with room for `bufferSeconds`
    /// of audio between the threads.
    public init(
        path: String, sampleRate: Int, channels: Int, format: OutputSampleFormat,
        bufferSeconds: Int = 10
    ) throws(FileError) {
        precondition(format != .s24, "devices are driven in s16, s32 or f32")
        self.path = path
        if access(path, F_OK) == 0 {
            throw FileError(
                path: path, operation: "record", message: "the file exists, and recording would replace it",
                fix: "choose another name, or move the old recording away first")
        }
        file = try createWAV(
            at: path, reportedAs: path, operation: "create the recording",
            sampleRate: sampleRate, channelCount: channels, format: format)
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        tap = AudioTap(frameCapacity: sampleRate * bufferSeconds, frameByteCount: channels * format.deviceByteCount)
    }

    private var closed = false

    deinit { if !closed { sf_close(file) } }

    /// Starts the writing thread (normal priority).
    public func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let status = startThread(
            &handle, context: context,
            { context in
                let recorder = Unmanaged<Recorder>.fromOpaque(context!).takeRetainedValue()
                recorder.run()
                return nil
            })
        precondition(status == 0, "cannot create the recording thread: \(String(cString: strerror(status)))")
        thread = handle
    }

    private func run() {
        var lastHeader = monotonicNanoseconds()
        while !stopRequested.load(ordering: .acquiring) {
            drain()
            let now = monotonicNanoseconds()
            if now - lastHeader >= 1_000_000_000 {
                sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
                lastHeader = now
            }
            usleep(20_000)
        }
        drain()
    }

    private func drain() {
        tap.read { bytes in
            guard writeFailure == nil, bytes.count > 0 else { return }
            let written = sf_write_raw(file, bytes.baseAddress, sf_count_t(bytes.count))
            if written != sf_count_t(bytes.count) {
                writeFailure = String(cString: sf_strerror(file))
            }
            framesWritten.wrappingAdd(Int(written) / tap.frameByteCount, ordering: .relaxed)
        }
    }

    /// Stops the thread after it has written everything pushed so far, and closes the file.
    /// Returns what to tell the user: frames written, frames dropped, and a write error.
    public func finish() -> (frames: Int, droppedFrames: Int, failure: String?) {
        stopRequested.store(true, ordering: .releasing)
        if let thread { pthread_join(thread, nil) }
        thread = nil
        if !closed { sf_close(file) }
        closed = true
        return (framesWritten.load(ordering: .relaxed), tap.droppedFrames.load(ordering: .relaxed), writeFailure)
    }
}
