import BellkeysControl
import BellkeysSystem
import CALSA
import Glibc

/// alsa-lib's message for an error code. (The audio module has its own: neither imports the other.)
private func alsaMessage(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

/// Every ALSA call that can fail goes through here. Thread: any.
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

/// An ALSA sequencer client with one writable port, listening to the System Announce port.
/// Opened non-blocking; read it when `descriptors` are readable.
/// Thread: control. Wraps `snd_seq_*`.
public final class Sequencer {
    private let handle: OpaquePointer
    public let client: Int
    public let port: Int
    public var address: SequencerAddress { SequencerAddress(client: client, port: port) }
    /// Times the kernel's input buffer was full and events were lost.
    public private(set) var inputOverflows = 0
    /// alsa-lib's error code from the first read that failed for another reason than the
    /// expected ones (nothing waiting, an overflowed input buffer, a signal); nil while reads
    /// work. Once set, the input is broken: the caller reports it and stops, as FluidSynth's
    /// ALSA sequencer driver does, so that a service manager can start bellkeys again.
    public private(set) var readFailure: Int32?
    /// Events the kernel holds for this client before it drops them: the kernel's maximum
    /// (SNDRV_SEQ_MAX_EVENTS), 1 s of a dense 2,000-message performance, instead of the default
    /// 200 (0.1 s of it, less than a slow wake-up of the control thread).
    public static let inputBufferEvents = 2_000
    /// The queue whose time the kernel stamps on delivered events; nil when none could be had.
    public let queue: Int?
    private var queueStatus: OpaquePointer?
    private var delivery = DeliveryClock()
    /// How long after its delivery each MIDI message was read (the control thread's wake-up time,
    /// which the delivery stamp keeps out of the timing). Reported when bellkeys stops.
    public private(set) var readLag = LagStatistics()

    /// Opens the sequencer as client `name` with a port of the same name.
    public init(name: String) throws(ALSAError) {
        var seq: OpaquePointer?
        bellkeys_alsa_silence()
        try check(
            snd_seq_open(&seq, "default", Int32(SND_SEQ_OPEN_DUPLEX), Int32(SND_SEQ_NONBLOCK)),
            "open the ALSA sequencer", device: "/dev/snd/seq",
            fix: "load the sequencer (modprobe snd-seq) and check that /dev/snd/seq exists; "
                + "`bellkeys render` works without one")
        handle = seq!
        client = Int(snd_seq_client_id(handle))
        snd_seq_set_client_name(handle, name)
        // A kernel that refuses the size keeps its default of 200, enough at ordinary playing rates.
        _ = snd_seq_set_client_pool_input(handle, Sequencer.inputBufferEvents)
        // A queue of our own, so the kernel stamps each event as it delivers it (see read()).
        // Without one (the machine's 32 queues are taken) events are stamped when read.
        let allocated = snd_seq_alloc_named_queue(handle, name)
        queue = allocated >= 0 ? Int(allocated) : nil
        let caps = UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE)
        let type = UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)
        var portInfo: OpaquePointer?
        snd_seq_port_info_malloc(&portInfo)
        defer { snd_seq_port_info_free(portInfo) }
        snd_seq_port_info_set_name(portInfo, name)
        snd_seq_port_info_set_capability(portInfo, caps)
        snd_seq_port_info_set_type(portInfo, type)
        snd_seq_port_info_set_midi_channels(portInfo, 16)
        if let queue {
            snd_seq_port_info_set_timestamping(portInfo, 1)
            snd_seq_port_info_set_timestamp_real(portInfo, 1)
            snd_seq_port_info_set_timestamp_queue(portInfo, Int32(queue))
        }
        do {
            try check(snd_seq_create_port(handle, portInfo), "create the sequencer port", device: "/dev/snd/seq")
            port = Int(snd_seq_port_info_get_port(portInfo))
            if let queue {
                try check(
                    snd_seq_control_queue(handle, Int32(queue), Int32(SND_SEQ_EVENT_START.rawValue), 0, nil),
                    "start the sequencer queue", device: "/dev/snd/seq")
                try check(snd_seq_drain_output(handle), "start the sequencer queue", device: "/dev/snd/seq")
                snd_seq_queue_status_malloc(&queueStatus)
                // A first read may be slow (cold caches); a few tries give a good measurement.
                for _ in 0..<8 where delivery.offset == nil { measureQueue() }
            }
            // System Announce: clients and ports coming and going, connections made and removed.
            try check(
                snd_seq_connect_from(
                    handle, Int32(port), Int32(SND_SEQ_CLIENT_SYSTEM), Int32(SND_SEQ_PORT_SYSTEM_ANNOUNCE)),
                "listen to the System Announce port", device: "/dev/snd/seq")
        } catch {
            if let queueStatus { snd_seq_queue_status_free(queueStatus) }
            snd_seq_close(handle)
            throw error
        }
    }

    deinit {
        if let queueStatus { snd_seq_queue_status_free(queueStatus) }
        snd_seq_close(handle)
    }

    /// Measures the queue's time against the monotonic clock (see `DeliveryClock`).
    private func measureQueue() {
        guard let queue, let queueStatus else { return }
        let before = MonotonicInstant(nanoseconds: monotonicNanoseconds())
        guard snd_seq_get_queue_status(handle, Int32(queue), queueStatus) >= 0 else { return }
        let after = MonotonicInstant(nanoseconds: monotonicNanoseconds())
        guard let time = snd_seq_queue_status_get_real_time(queueStatus)?.pointee else { return }
        delivery.sample(before: before, queue: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec), after: after)
    }

    /// The descriptors to poll for input.
    public var descriptors: [FileDescriptor] { pollDescriptors().map { FileDescriptor($0.fd) } }

    /// alsa-lib's words for `readFailure`, or nil.
    public var readFailureMessage: String? { readFailure.map { alsaMessage($0) } }

    private func pollDescriptors() -> [pollfd] {
        let count = Int(snd_seq_poll_descriptors_count(handle, Int16(POLLIN)))
        var fds = [pollfd](repeating: pollfd(), count: count)
        let filled = fds.withUnsafeMutableBufferPointer {
            snd_seq_poll_descriptors(handle, $0.baseAddress, UInt32(count), Int16(POLLIN))
        }
        return Array(fds.prefix(Int(max(filled, 0))))
    }

    /// Every port of every client, in client and port order.
    public func ports() -> [SequencerPort] {
        withInfo { clientInfo, portInfo in
            var result: [SequencerPort] = []
            snd_seq_client_info_set_client(clientInfo, -1)
            while snd_seq_query_next_client(handle, clientInfo) >= 0 {
                snd_seq_port_info_set_client(portInfo, snd_seq_client_info_get_client(clientInfo))
                snd_seq_port_info_set_port(portInfo, -1)
                while snd_seq_query_next_port(handle, portInfo) >= 0 {
                    result.append(SequencerPort(clientInfo, portInfo))
                }
            }
            return result
        }
    }

    /// The port at `address`, if it exists (two queries, not a walk over every port).
    public func port(at address: SequencerAddress) -> SequencerPort? {
        withInfo { clientInfo, portInfo in
            guard snd_seq_get_any_client_info(handle, Int32(address.client), clientInfo) >= 0,
                snd_seq_get_any_port_info(handle, Int32(address.client), Int32(address.port), portInfo) >= 0
            else { return nil }
            return SequencerPort(clientInfo, portInfo)
        }
    }

    /// Runs `body` with a client-info and a port-info record, freed afterwards.
    private func withInfo<T>(_ body: (OpaquePointer?, OpaquePointer?) -> T) -> T {
        var clientInfo: OpaquePointer?, portInfo: OpaquePointer?
        snd_seq_client_info_malloc(&clientInfo)
        snd_seq_port_info_malloc(&portInfo)
        defer {
            snd_seq_client_info_free(clientInfo)
            snd_seq_port_info_free(portInfo)
        }
        return body(clientInfo, portInfo)
    }

    /// Subscribes this client's port to what `source` sends.
    public func connect(from source: SequencerAddress) throws(ALSAError) {
        try check(
            snd_seq_connect_from(handle, Int32(port), Int32(source.client), Int32(source.port)),
            "connect from \(source)", device: "sequencer")
    }

    /// The next event and the monotonic time it arrived, or nil when none is waiting. Wraps
    /// `snd_seq_event_input`.
    ///
    /// The arrival is the kernel's delivery stamp, turned into the monotonic clock: the moment
    /// the keyboard's bytes reached bellkeys' port, however late this thread wakes to read them.
    /// Without a queue it is the time of the read.
    public func read() -> (event: SequencerEvent, arrival: MonotonicInstant)? {
        while true {
            var pointer: UnsafeMutablePointer<snd_seq_event_t>?
            let result = snd_seq_event_input(handle, &pointer)
            if result == -EAGAIN || result == -EWOULDBLOCK { return nil }
            // -ENOSPC: the kernel's input buffer overflowed and events were lost; go on reading.
            if result == -ENOSPC {
                inputOverflows += 1
                continue
            }
            if result == -EINTR { continue }
            if result < 0 {
                if readFailure == nil { readFailure = result }
                return nil
            }
            guard let event = pointer else { return nil }
            let now = MonotonicInstant(nanoseconds: monotonicNanoseconds())
            let stamp = bellkeys_seq_event_real_time(event, Int32(queue ?? -1))
            let arrival = stamp >= 0 ? delivery.arrival(queue: UInt64(stamp), readAt: now) : now
            let decoded = decode(event)
            if stamp >= 0, case .midi = decoded { readLag.add(now.nanoseconds - arrival.nanoseconds) }
            return (decoded, arrival)
        }
    }

    /// Measures the queue against the monotonic clock again; the control thread calls it each
    /// time it wakes, so the measurement follows the queue timer.
    public func remeasure() { measureQueue() }

    /// Reads the fields bellkeys uses out of alsa-lib's event record and decodes them.
    private func decode(_ event: UnsafeMutablePointer<snd_seq_event_t>) -> SequencerEvent {
        let note = bellkeys_seq_event_note(event), control = bellkeys_seq_event_control(event)
        let connect = bellkeys_seq_event_connect(event)
        return SequencerEvent(
            decoding: SequencerEventFields(
                type: Int32(bellkeys_seq_event_type(event)),
                source: SequencerAddress(bellkeys_seq_event_source(event)),
                note: (note.channel, note.note, note.velocity),
                control: (control.channel, control.param, control.value),
                address: SequencerAddress(bellkeys_seq_event_address(event)),
                connection: (SequencerAddress(connect.sender), SequencerAddress(connect.dest))))
    }
}
