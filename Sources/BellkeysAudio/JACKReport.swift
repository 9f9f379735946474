import BellkeysControl
import BellkeysEngine
import BellkeysSystem
import CJack
import Glibc
import Synchronization

// What the JACK driver says of itself: the start-up lines, its part of the status line, the
// closing counters and its row in `bellkeys list`. Thread: control.
extension JACKOutput {
    public func startupLines(scheduling: RealTimeScheduling) -> [String] {
        let granted = configuration
        var lines = [
            "  output \(clientName) on \(granted.device): \(granted.sampleRate) Hz, \(granted.channels) port\(granted.channels == 1 ? "" : "s"), "
                + "buffer \(granted.periodFrames) frames (\(secondsText(granted.bufferMilliseconds, digits: 2)) ms), as the server sets it",
            "  connected "
                + (connectionLines.isEmpty
                    ? "nothing" + (outputConnection == .none ? " (--jack-connect none)" : "")
                    : connectionLines.joined(separator: ", ")),
        ]
        switch scheduling {
        case .realTime(let priority) where priority > 0:
            lines.append("  process thread: JACK's, real-time (SCHED_FIFO, priority \(priority))")
        case .realTime: lines.append("  process thread: JACK's, real-time")
        case .normal:
            lines.append("  notice: the JACK server runs without real-time scheduling; start it with -R (jackd -R ...)")
        }
        return lines
    }

    /// "xruns N · buffer N · DSP x%": bellkeys' share of the cycle since the last status line.
    public func statusText() -> String {
        statusLoad.update(
            cycles: cycles.load(ordering: .relaxed), busyNanoseconds: busyNanoseconds.load(ordering: .relaxed),
            bufferFrames: bufferFrames.load(ordering: .relaxed), sampleRate: configuration.sampleRate)
        return "xruns \(xruns.load(ordering: .relaxed)) · buffer \(bufferFrames.load(ordering: .relaxed))"
            + " · DSP \(secondsText(statusLoad.percent, digits: 1))%"
    }

    public func closingText(mixer: LiveMixer) -> String {
        let cycles = cycles.load(ordering: .relaxed)
        let buffer = bufferFrames.load(ordering: .relaxed), rate = configuration.sampleRate
        let mean = CycleLoad.percent(
            busyNanoseconds: busyNanoseconds.load(ordering: .relaxed), cycles: cycles, bufferFrames: buffer,
            sampleRate: rate)
        let longest = CycleLoad.percent(
            busyNanoseconds: longestCycleNanoseconds.load(ordering: .relaxed), cycles: 1, bufferFrames: buffer,
            sampleRate: rate)
        let unreported = mixer.unreportedPlays.load(ordering: .relaxed)
        let repeated = repeatedCycles.load(ordering: .relaxed)
        return
            "JACK xruns: \(xruns.load(ordering: .relaxed)), cycles \(cycles), skipped \(skippedCycles.load(ordering: .relaxed))"
            + " (\(skippedFrames.load(ordering: .relaxed)) frames)"
            + (repeated > 0 ? ", repeated \(repeated) (\(repeatedFrames.load(ordering: .relaxed)) frames)" : "")
            + ", buffer size changes \(bufferSizeChanges.load(ordering: .relaxed))"
            + ", DSP mean \(secondsText(mean, digits: 2))% longest \(secondsText(longest, digits: 1))% of a cycle"
            + "; JACK MIDI messages \(midiEventsPlayed.load(ordering: .relaxed)) (not played \(midiEventsIgnored.load(ordering: .relaxed)))"
            + (unreported > 0 ? ", \(unreported) not kept for the loop (the control thread fell behind)" : "")
    }

    /// The JACK server this user would play through, for `bellkeys list`: its rate, buffer and
    /// playback ports, or why there is none. Opens and closes a client without ports.
    public static func listing() -> OutputDriverListing {
        if let problem = loadJACK() {
            return OutputDriverListing(name: "jack", lines: ["  not installed (\(problem))"], canPlay: false)
        }
        var status: Int32 = 0
        guard let client = bk_jack_client_open("bellkeys-list", Int32(BK_JACK_NO_START_SERVER), &status) else {
            return OutputDriverListing(
                name: "jack",
                lines: [
                    "  no JACK server running (jack_client_open status 0x\(String(status, radix: 16))): "
                        + "bellkeys plays through ALSA; start one (jackd, qjackctl) or run under pw-jack"
                ], canPlay: false)
        }
        defer { bk_jack_client_close(client) }
        let rate = Int(bk_jack_get_sample_rate(client)), buffer = Int(bk_jack_get_buffer_size(client))
        let playback = takeNames(
            bk_jack_get_ports(
                client, nil, BK_JACK_AUDIO_TYPE, UInt(BK_JACK_PORT_IS_PHYSICAL | BK_JACK_PORT_IS_INPUT)))
        return OutputDriverListing(
            name: "jack",
            lines: [
                "  \(bk_jack_is_pipewire() != 0 ? "PipeWire's JACK" : "JACK server") running: \(rate) Hz, buffer \(buffer) frames; "
                    + (playback.isEmpty ? "no physical playback ports" : "playback " + playback.joined(separator: ", "))
            ], canPlay: true)
    }
}

/// The process callback's share of JACK's cycles. Thread: control.
public struct CycleLoad: Sendable {
    private var lastCycles = 0
    private var lastBusy: UInt64 = 0
    /// The share between the last two `update`s, percent.
    public private(set) var percent = 0.0

    public init() {}

    /// `busyNanoseconds` spent in `cycles` cycles of `bufferFrames` at `sampleRate`, as a
    /// percentage of the time those cycles last.
    public static func percent(busyNanoseconds: UInt64, cycles: Int, bufferFrames: Int, sampleRate: Int) -> Double {
        guard cycles > 0 else { return 0 }
        let periodNanoseconds = Double(bufferFrames) * 1e9 / Double(sampleRate)
        return Double(busyNanoseconds) / Double(cycles) / periodNanoseconds * 100
    }

    /// Takes the counters now; `percent` becomes the share since the last call (unchanged if no
    /// cycle ran).
    public mutating func update(cycles: Int, busyNanoseconds: UInt64, bufferFrames: Int, sampleRate: Int) {
        if cycles > lastCycles {
            percent = Self.percent(
                busyNanoseconds: busyNanoseconds &- lastBusy, cycles: cycles - lastCycles, bufferFrames: bufferFrames,
                sampleRate: sampleRate)
        }
        lastCycles = cycles
        lastBusy = busyNanoseconds
    }
}
