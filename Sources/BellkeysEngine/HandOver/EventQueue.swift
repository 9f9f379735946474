import BellkeysModel
import Synchronization

/// A bounded single-producer, single-consumer queue of `EngineEvent`s. Lock-free and
/// allocation-free after `init`.
///
/// Non-copyable: it owns its slots, and its owner reaches it without reference counting.
///
/// Thread: each queue has one producer thread (`push`) and one consumer thread (`peek`, `pop`),
/// named where it is declared: an engine's live and scheduled queues are pushed by the control
/// thread and popped by the render thread; its `direct` queue is the render thread's own (both
/// ends); `LiveMixer.played` goes from the render thread to the control thread. Offline, one
/// thread does both. `count` any.
public struct EventQueue: ~Copyable, @unchecked Sendable {
    private let slots: UnsafeMutablePointer<EngineEvent>
    private let mask: Int
    /// Next slot to read; written only by the consumer.
    private let head = Atomic<Int>(0)
    /// Next slot to write; written only by the producer.
    private let tail = Atomic<Int>(0)

    /// Creates a queue holding at least `capacity` events (rounded up to a power of two).
    public init(capacity: Int) {
        precondition(capacity > 0)
        var size = 1
        while size < capacity { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: EngineEvent(frame: 0, status: 0, data1: 0, data2: 0), count: size)
        mask = size - 1
    }

    deinit { slots.deallocate() }

    /// Maximum number of queued events.
    public var capacity: Int { mask + 1 }

    /// Events waiting (approximate while both sides run).
    public var count: Int { tail.acquiringLoad() - head.acquiringLoad() }

    /// Appends `event`; returns false, changing nothing, when the queue is full.
    /// Thread: producer only. Real-time safe.
    @_noLocks
    public func push(_ event: EngineEvent) -> Bool {
        let t = tail.relaxedLoad()
        if t - head.acquiringLoad() > mask { return false }
        slots[t & mask] = event
        tail.releasingStore(t + 1)
        return true
    }

    /// The oldest event, without removing it. Thread: consumer only. Real-time safe.
    @_noLocks
    public func peek() -> EngineEvent? {
        let h = head.relaxedLoad()
        if h == tail.acquiringLoad() { return nil }
        return slots[h & mask]
    }

    /// Events pushed since the queue was made. Thread: producer only.
    public var pushedCount: Int { tail.relaxedLoad() }

    /// The position of the oldest event among all ever pushed (0 for the first).
    /// Thread: consumer only. Real-time safe.
    public var headIndex: Int {
        @_noLocks get { head.relaxedLoad() }
    }

    /// Removes the oldest event. Thread: consumer only, after `peek` returned one.
    @_noLocks
    public func pop() {
        let h = head.relaxedLoad()
        head.releasingStore(h + 1)
    }
}
