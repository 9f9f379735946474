import Synchronization

/// A copy of what the render thread plays, handed to another thread: a single-producer,
/// single-consumer byte ring, lock-free and allocation-free after `init`. The render thread
/// pushes whole periods and never waits; when the reader falls behind by more than the ring
/// holds, a period is dropped and counted instead.
///
/// Thread: `push` the render thread only; `read` one consumer thread; the counters any.
public final class AudioTap: @unchecked Sendable {
    private let storage: UnsafeMutableRawPointer
    /// Ring size in bytes: a whole number of frames, so a frame never wraps.
    public let capacity: Int
    public let frameByteCount: Int
    /// Bytes ever read; written only by the consumer.
    private let head = Atomic<Int>(0)
    /// Bytes ever pushed; written only by the producer.
    private let tail = Atomic<Int>(0)
    /// Frames dropped because the ring was full.
    public let droppedFrames = Atomic<Int>(0)

    public init(frameCapacity: Int, frameByteCount: Int) {
        precondition(frameCapacity > 0 && frameByteCount > 0)
        capacity = frameCapacity * frameByteCount
        self.frameByteCount = frameByteCount
        storage = .allocate(byteCount: capacity, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
    }

    deinit { storage.deallocate() }

    /// Copies `frameCount` frames in, all or none; returns false (counting them dropped) when
    /// they do not fit. Thread: producer. Real-time safe.
    @_noLocks
    @discardableResult
    public func push(_ frames: UnsafeRawPointer, frameCount: Int) -> Bool {
        let byteCount = frameCount * frameByteCount
        let t = tail.relaxedLoad()
        if t - head.acquiringLoad() + byteCount > capacity {
            droppedFrames.relaxedAdd(frameCount)
            return false
        }
        let start = t % capacity
        let first = min(byteCount, capacity - start)
        (storage + start).copyMemory(from: frames, byteCount: first)
        if first < byteCount { storage.copyMemory(from: frames + first, byteCount: byteCount - first) }
        tail.releasingStore(t + byteCount)
        return true
    }

    /// Hands what is waiting to `body` (one or two runs of whole frames, in order) and
    /// frees it. Returns the byte count. Thread: consumer.
    @discardableResult
    public func read(_ body: (UnsafeRawBufferPointer) -> Void) -> Int {
        let h = head.relaxedLoad()
        let byteCount = tail.acquiringLoad() - h
        guard byteCount > 0 else { return 0 }
        let start = h % capacity
        let first = min(byteCount, capacity - start)
        body(UnsafeRawBufferPointer(start: storage + start, count: first))
        if first < byteCount { body(UnsafeRawBufferPointer(start: storage, count: byteCount - first)) }
        head.releasingStore(h + byteCount)
        return byteCount
    }
}
