import BellkeysControl
import BellkeysEngine
import BellkeysSystem
import Glibc

/// The ALSA output driver: a PCM device (`PCMOutput`) and the render thread that pulls each
/// period from the mixer and writes it with blocking `snd_pcm_writei` (`RenderThread`).
/// Thread: control.
public final class ALSAOutput: AudioOutput {
    public private(set) var device: PCMOutput
    private var thread: RenderThread?
    private var mixer: LiveMixer?
    private var tap: AudioTap?
    private var priority: Int32 = 0
    /// The rule that grows a default buffer after underruns; nil when the user chose the size.
    public private(set) var growth: BufferGrowth?
    /// Underruns of the devices opened before the one now (the buffer grew).
    private var earlierUnderruns = 0
    /// Why the device could not be opened again at a new size (it then failed), if it could not.
    private var reopenFailure: String?
    public let wakeup = Wakeup()

    /// Opens `device` (wraps `snd_pcm_open` and the hardware and software settings). With
    /// `grows`, the buffer asked for is where it starts: after underruns it grows
    /// (`BufferGrowth`) up to `BufferGrowth.largest`.
    public init(
        device: String, sampleRate: Int, channels: Int, periodFrames: Int, periods: Int, grows: Bool = false
    ) throws(ALSAError) {
        self.device = try PCMOutput(
            device: device, sampleRate: sampleRate, channels: channels,
            periodFrames: periodFrames, periods: periods)
        // A device that grants a period past the largest step already has more than growth
        // would give it.
        let granted = self.device.configuration
        if grows, granted.periodFrames <= BufferGrowth.largest.periodFrames {
            growth = BufferGrowth(size: .init(periodFrames: granted.periodFrames, periods: granted.periods))
        }
    }

    public var configuration: OutputConfiguration { device.configuration }

    /// With growth, the mixer is built for the largest period it may grow to.
    public var maximumPeriodFrames: Int {
        growth == nil ? configuration.periodFrames : max(configuration.periodFrames, BufferGrowth.largest.periodFrames)
    }

    public var wakeDescriptor: FileDescriptor? { FileDescriptor(wakeup.descriptor) }

    public func start(pulling mixer: LiveMixer, tap: AudioTap?, priority: Int32) -> RealTimeScheduling {
        precondition(thread == nil, "an output is started once")
        self.mixer = mixer
        self.tap = tap
        self.priority = priority
        return startThread()
    }

    private func startThread() -> RealTimeScheduling {
        let thread = RenderThread(mixer: mixer!, output: device, tap: tap, wakeup: wakeup)
        self.thread = thread
        return thread.start(priority: priority)
    }

    public var failure: String? {
        if let reopenFailure { return reopenFailure }
        guard let thread, thread.failed else { return nil }
        return
            "the sound device \(configuration.device) failed: \(alsaMessage(thread.failureCode.load(ordering: .acquiring))) (unplugged?)"
    }

    public func stop() {
        thread?.stop()
        device.stop()
    }

    public var underrunCount: Int { earlierUnderruns + device.underruns.load(ordering: .relaxed) }

    /// Grows the buffer when the device has underrun too often (`BufferGrowth`): the render
    /// thread stops after its period, the device is opened again at the next size, and a new
    /// render thread starts on the same mixer (the bells go on where they were; the device's
    /// clock line starts again). Returns the line that says so.
    public func maintain(now: MonotonicInstant) -> [String] {
        guard var rule = growth else { return [] }
        let next = rule.observe(underruns: device.underruns.load(ordering: .relaxed), now: now)
        growth = rule
        guard let next, let thread, !thread.failed, reopenFailure == nil else { return [] }
        return grow(to: next).map { [$0] } ?? []
    }

    private func grow(to next: BufferGrowth.Size) -> String? {
        guard var rule = growth, let mixer else { return nil }
        let before = rule.size, was = configuration
        thread?.stop()
        thread = nil
        // What the mixer rendered is played out (a buffer, at most 43 ms), not dropped.
        device.drain()
        let counted = device.underruns.load(ordering: .relaxed)
        earlierUnderruns += counted
        let line: String
        do {
            device = try reopen(was, size: next, replacing: device)
            let granted = BufferGrowth.Size(periodFrames: configuration.periodFrames, periods: configuration.periods)
            if rule.grew(to: granted) {
                line =
                    "sound: \(BufferGrowth.underrunLimit) underruns within 10 s at \(before): the buffer grows to "
                    + "\(granted) (\(secondsText(configuration.bufferMilliseconds, digits: 1)) ms)"
                    + (rule.canGrow ? "" : ", as large as it grows")
            } else {
                line =
                    "sound: \(BufferGrowth.underrunLimit) underruns within 10 s at \(before), and the device gives no larger buffer"
            }
        } catch {
            // Back to the size that worked, so the bells go on.
            do {
                device = try reopen(was, size: before, replacing: nil)
            } catch let again {
                earlierUnderruns -= counted // `device` is still the old one, counted as it is
                reopenFailure = "the sound device \(was.device) could not be opened again: \(again)"
                wakeup.signal()
                return nil
            }
            rule.grew(to: before)
            line =
                "sound: \(BufferGrowth.underrunLimit) underruns within 10 s at \(before), but \(error); staying there"
        }
        growth = rule
        // (The render thread's call, made here while no render thread runs: the old one was
        // joined, and the new one starts after it.)
        mixer.clock.restart()
        _ = startThread()
        return line
    }

    /// Closes `old` (if any) and opens the device of `was` again at `size`, with the rate,
    /// channels and format it had: a device that now grants other ones is refused.
    private func reopen(_ was: OutputConfiguration, size: BufferGrowth.Size, replacing old: PCMOutput?)
        throws(ALSAError)
        -> PCMOutput
    {
        old?.close()
        let opened = try PCMOutput(
            device: was.device, sampleRate: was.sampleRate, channels: was.channels, periodFrames: size.periodFrames,
            periods: size.periods)
        let now = opened.configuration
        guard now.sampleRate == was.sampleRate, now.channels == was.channels, now.format == was.format,
            now.periodFrames <= mixer?.maximumPeriodFrames ?? BufferGrowth.largest.periodFrames
        else {
            opened.close()
            throw ALSAError(
                operation: "open it again at \(size) with the same format", device: was.device, code: EINVAL,
                message: alsaMessage(EINVAL), fix: "choose the buffer with --period and --periods")
        }
        return opened
    }

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

    public func statusText() -> String {
        guard let growth, growth.steps > 0 else { return "underruns \(underrunCount)" }
        return "underruns \(underrunCount) · buffer grew to \(growth.size)"
    }

    public func closingText(mixer: LiveMixer) -> String {
        guard let growth, growth.steps > 0 else { return "underruns: \(underrunCount)" }
        return "underruns: \(underrunCount) (the buffer grew from \(growth.first) to \(growth.size))"
    }

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
