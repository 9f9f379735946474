import BellkeysControl
import BellkeysEngine
import BellkeysSystem
import CALSA
import Glibc
import Synchronization

/// How one period's write went.
public enum PCMWriteResult: Equatable, Sendable {
    case written
    /// The device ran dry (underrun) or was suspended and has been restarted.
    case recovered
    /// The device is gone or broken (`snd_strerror` code); stop.
    case failed(Int32)
}

/// An ALSA playback device opened for interleaved writes, blocking.
/// Thread: opened and closed on the control thread; `write` on the render thread only.
/// Wraps `snd_pcm_*`, in the manner of alsa-lib's `test/pcm_min.c`.
public final class PCMOutput: @unchecked Sendable {
    private let handle: OpaquePointer
    public let configuration: OutputConfiguration
    /// Underruns (and suspends) recovered so far. Written by `write`, read anywhere.
    public let underruns = Atomic<Int>(0)

    /// Opens `device` and asks for the rate, at least `channels` ≤ 2 channels, and `periods`
    /// periods of `periodFrames`. Formats are tried in the order s32, s16, f32. ALSA's own
    /// resampling is turned off: a device that refuses `sampleRate` grants its nearest rate,
    /// and the caller resamples the bank to it once.
    public init(device: String, sampleRate: Int, channels: Int, periodFrames: Int, periods: Int) throws(ALSAError) {
        var pcm: OpaquePointer?
        bellkeys_alsa_silence()
        // Non-blocking open: a device in use by another program fails at once instead of waiting.
        try check(
            snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK), "open the sound device",
            device: device,
            fix: "check the name with `bellkeys list` (or `aplay -L`); "
                + "a device that is busy is used by another program; `bellkeys render` needs no sound card")
        handle = pcm!
        do {
            try check(snd_pcm_nonblock(handle, 0), "set blocking mode", device: device)
            configuration = try PCMOutput.configure(
                handle, device: device, sampleRate: sampleRate, channels: channels,
                periodFrames: periodFrames, periods: periods)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    private var isClosed = false

    deinit { close() }

    /// Closes the device (after `stop`, with no write under way). Thread: control.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        snd_pcm_close(handle)
    }

    private static func configure(
        _ pcm: OpaquePointer, device: String, sampleRate: Int, channels: Int,
        periodFrames: Int, periods: Int
    ) throws(ALSAError) -> OutputConfiguration {
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(pcm, hw), "read the device's capabilities", device: device)
        try check(
            snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "set interleaved access",
            device: device)
        let formats: [(OutputSampleFormat, snd_pcm_format_t)] =
            [(.s32, SND_PCM_FORMAT_S32_LE), (.s16, SND_PCM_FORMAT_S16_LE), (.f32, SND_PCM_FORMAT_FLOAT_LE)]
        guard let chosen = formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.1) == 0 }) else {
            throw ALSAError(
                operation: "find a sample format (it takes none of S32_LE, S16_LE, FLOAT_LE)",
                device: device, code: EINVAL, message: alsaMessage(EINVAL),
                fix: "use the device through `plughw:` or `default`")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, chosen.1), "set the sample format", device: device)
        var channelCount = UInt32(channels)
        try check(
            snd_pcm_hw_params_set_channels_near(pcm, hw, &channelCount), "set \(channels) channels", device: device)
        snd_pcm_hw_params_set_rate_resample(pcm, hw, 0)
        var rate = UInt32(sampleRate)
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, nil), "set the rate \(sampleRate) Hz", device: device)
        var period = snd_pcm_uframes_t(periodFrames)
        try check(
            snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, nil), "set the period \(periodFrames) frames",
            device: device, fix: "try another --period")
        var periodCount = UInt32(periods)
        if snd_pcm_hw_params_set_periods_near(pcm, hw, &periodCount, nil) < 0 {
            var buffer = snd_pcm_uframes_t(Int(period) * periods)
            try check(
                snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), "set the buffer size", device: device,
                fix: "try other --period and --periods")
        }
        try check(
            snd_pcm_hw_params(pcm, hw), "apply the hardware settings", device: device,
            fix: "try other --period, --periods or --rate")
        var grantedPeriod: snd_pcm_uframes_t = 0, grantedBuffer: snd_pcm_uframes_t = 0
        var grantedRate: UInt32 = 0, grantedChannels: UInt32 = 0
        snd_pcm_hw_params_get_period_size(hw, &grantedPeriod, nil)
        snd_pcm_hw_params_get_buffer_size(hw, &grantedBuffer)
        snd_pcm_hw_params_get_rate(hw, &grantedRate, nil)
        snd_pcm_hw_params_get_channels(hw, &grantedChannels)

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), "read the software settings", device: device)
        // Start once the buffer is full; wake the writer whenever a period is free.
        try check(
            snd_pcm_sw_params_set_start_threshold(pcm, sw, grantedBuffer), "set the start threshold", device: device)
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, grantedPeriod), "set the wake-up size", device: device)
        try check(snd_pcm_sw_params(pcm, sw), "apply the software settings", device: device)
        try check(snd_pcm_prepare(pcm), "prepare the device", device: device)
        return OutputConfiguration(
            device: device, sampleRate: Int(grantedRate), channels: Int(grantedChannels),
            format: chosen.0, periodFrames: Int(grantedPeriod), bufferFrames: Int(grantedBuffer))
    }

    /// Writes `frameCount` interleaved frames, waiting for room. Underruns and suspends are
    /// recovered and counted; a vanished device fails. Every write error is sorted here.
    /// Thread: render. Makes no allocation; its only system calls are alsa-lib's write path.
    public func write(_ frames: UnsafeRawPointer, frameCount: Int, frameByteCount: Int) -> PCMWriteResult {
        var left = frameCount, pointer = frames, result = PCMWriteResult.written
        while left > 0 {
            let n = snd_pcm_writei(handle, pointer, snd_pcm_uframes_t(left))
            if n >= 0 {
                left -= Int(n)
                pointer += Int(n) * frameByteCount
                continue
            }
            switch Int32(-n) {
            case EAGAIN:
                snd_pcm_wait(handle, 100)
            case EINTR:
                continue
            case EPIPE, ESTRPIPE:
                underruns.wrappingAdd(1, ordering: .relaxed)
                result = .recovered
                // snd_pcm_recover: prepare after an underrun, resume (or prepare) after a suspend.
                let status = snd_pcm_recover(handle, Int32(n), 1)
                if status < 0 { return .failed(-status) }
            default:
                return .failed(Int32(-n))
            }
        }
        return result
    }

    /// Stops at once, dropping what is buffered. Thread: control, after the render thread ended
    /// (or to cut short a write it is stuck in; see `RenderThread.stop`).
    public func stop() {
        guard !isClosed else { return }
        snd_pcm_drop(handle)
    }

    /// Plays out what is buffered, then stops (blocking, at most the buffer's length). Thread:
    /// control, after the render thread ended.
    public func drain() {
        guard !isClosed else { return }
        snd_pcm_drain(handle)
    }
}

/// The message alsa-lib gives for an error code.
func alsaMessage(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

/// Every ALSA call of the audio driver that can fail goes through here (the MIDI module has its
/// own for the sequencer: neither module imports the other). Thread: any.
@discardableResult
func check(_ result: Int32, _ operation: @autoclosure () -> String, device: String, fix: @autoclosure () -> String = "")
    throws(ALSAError) -> Int32
{
    if result < 0 {
        throw ALSAError(
            operation: operation(), device: device, code: -result, message: alsaMessage(-result), fix: fix())
    }
    return result
}
