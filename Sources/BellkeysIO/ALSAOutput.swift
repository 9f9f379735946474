import BellkeysControl
import BellkeysEngine
import Glibc

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
        return
            "the sound device \(configuration.device) failed: \(alsaMessage(thread.failureCode.load(ordering: .acquiring))) (unplugged?)"
    }

    public func stop() {
        thread?.stop()
        device.stop()
    }

    public var underrunCount: Int { device.underruns.load(ordering: .relaxed) }

    public func startupLines(scheduling: RealTimeScheduling) -> [String] {
        let granted = configuration
        var lines = [
            "  output \(granted.device): \(granted.sampleRate) Hz, \(granted.channels) ch, \(granted.format.rawValue), "
                + "period \(granted.periodFrames) frames × \(granted.periods) = buffer \(granted.bufferFrames) frames "
                + "(\(secondsText(granted.bufferMilliseconds, digits: 2)) ms)"
        ]
        switch scheduling {
        case .realTime(let priority):
            lines.append("  render thread: real-time (SCHED_FIFO, priority \(priority))")
        case .normal(let code):
            lines.append(
                "  notice: render thread at normal priority: real-time scheduling was refused (\(String(cString: strerror(code)))).\n"
                    + "    fix: add yourself to the audio group with an rtprio limit (Debian: `sudo usermod -aG audio $USER` and a line "
                    + "`@audio - rtprio 95` in /etc/security/limits.d/audio.conf), then log in again")
        }
        return lines
    }

    public func statusText() -> String { "underruns \(underrunCount)" }

    public func closingText(mixer: LiveMixer) -> String { "underruns: \(underrunCount)" }

    /// The sound cards and PCM devices, for `bellkeys list`.
    public static func listing() -> OutputDriverListing {
        var lines: [String] = []
        let cards = soundCards()
        for card in cards { lines.append("  card \(card.index): \(card.name)") }
        for device in pcmDeviceNames() { lines.append("  " + pad(device.name, 28) + device.description) }
        if cards.isEmpty { lines.append("  no sound card (/dev/snd has none)") }
        return OutputDriverListing(name: "alsa", lines: lines, canPlay: !cards.isEmpty)
    }
}
