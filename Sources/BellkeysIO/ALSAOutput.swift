import BellkeysControl
import BellkeysEngine

/// The ALSA output driver: a PCM device (`PCMOutput`) and the render thread that pulls each
/// period from the mixer and writes it with blocking `snd_pcm_writei` (`RenderThread`).
/// Thread: control.
public final class ALSAOutput: AudioOutput {
    public let device: PCMOutput
    private var thread: RenderThread?

    /// Opens `device` (wraps `snd_pcm_open` and the hardware and software settings).
    public init(device: String, sampleRate: Int, channels: Int, periodFrames: Int, periods: Int) throws(ALSAError) {
        self.device = try PCMOutput(
            device: device, sampleRate: sampleRate, channels: channels,
            periodFrames: periodFrames, periods: periods)
    }

    public var configuration: OutputConfiguration { device.configuration }

    public func start(pulling mixer: LiveMixer, tap: AudioTap?, priority: Int32) -> RealTimeScheduling {
        precondition(thread == nil, "an output is started once")
        let thread = RenderThread(mixer: mixer, output: device, tap: tap)
        self.thread = thread
        return thread.start(priority: priority)
    }

    public var failure: String? {
        guard let thread, thread.failed else { return nil }
        return "\(alsaMessage(thread.failureCode.load(ordering: .acquiring))) (unplugged?)"
    }

    public func stop() {
        thread?.stop()
        device.stop()
    }

    public var underrunCount: Int { device.underruns.load(ordering: .relaxed) }
}
