import BellkeysFormats
import BellkeysModel
import BellkeysSystem
import Glibc

/// Threads that decode sample files side by side: up to 2, one per processor. Each holds one
/// decoded file until the bank takes it, so each adds at most a file's stored size to the peak
/// memory; measured on 2 cores (docs/design/performance.md, "Loading a large instrument").
/// Thread: any.
public func defaultDecodingThreads() -> Int { max(1, min(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

/// Loads every request into `bank`, decoding on `threads` threads, and returns each one's result
/// in the order asked. The bank is filled on the calling thread in that order, so sample
/// indices (and every byte) are the same whatever the threads' timing and however many there
/// are: the i-th file that loads gets the i-th new index. A decoding thread starts a file only
/// while fewer than `threads` decoded files are outside the bank. Thread: control (it starts and
/// joins the decoding threads).
public func loadSamples(_ requests: [SampleRequest], into bank: SampleBank, threads: Int = defaultDecodingThreads())
    -> [Result<LoadedSample, SampleError>]
{
    let rate = bank.sampleRate
    let decode = { @Sendable (index: Int) -> Result<DecodedSample, SampleError> in
        let request = requests[index]
        return Result { () throws(SampleError) in
            try decodeSample(
                path: request.path, sampleRate: rate, keepStereo: request.keepStereo, mayLoop: request.mayLoop)
        }
    }
    var results: [Result<LoadedSample, SampleError>] = []
    results.reserveCapacity(requests.count)
    inOrder(count: requests.count, threads: threads, make: decode) { _, decoded in
        results.append(store(decoded, into: bank))
    }
    return results
}

/// Makes `count` values on up to `threads` threads (`make`, from each index) and hands each to
/// `take` on the calling thread, in index order, as soon as it and those before it are made. A
/// thread starts a value only while fewer than `threads` made ones wait for `take`, so each
/// thread holds at most one. With one thread (or one value), everything runs on the calling
/// thread. Thread: control (it starts and joins the threads).
func inOrder<Value: Sendable>(
    count: Int, threads: Int, make: @escaping @Sendable (Int) -> Value, take: (Int, Value) -> Void
) {
    let threadCount = max(1, min(threads, count))
    guard threadCount > 1 else {
        for i in 0..<count { take(i, make(i)) }
        return
    }
    let queue = OrderedWork(count: count, window: threadCount, make: make)
    var handles: [pthread_t] = []
    for _ in 0..<threadCount {
        let context = Unmanaged.passRetained(queue as ThreadWork).toOpaque()
        var handle = pthread_t()
        let status = startThread(
            &handle, context: context,
            { context in
                Unmanaged<ThreadWork>.fromOpaque(context!).takeRetainedValue().work()
                return nil
            })
        precondition(status == 0, "cannot start a thread to load samples: \(String(cString: strerror(status)))")
        handles.append(handle)
    }
    for i in 0..<count {
        take(i, queue.take(i))
        queue.didTake(i)
    }
    for handle in handles { pthread_join(handle, nil) }
}

/// A decoded file added to `bank`, or why it could not be.
private func store(_ decoded: Result<DecodedSample, SampleError>, into bank: SampleBank)
    -> Result<LoadedSample, SampleError>
{
    decoded.flatMap { sample in Result { () throws(SampleError) in try sample.store(into: bank) } }
}

/// What a thread started by `inOrder` runs (a class that is not generic: a C function starts
/// the thread, and cannot name a generic one). Thread: any.
private class ThreadWork: @unchecked Sendable {
    func work() {}
}

/// `first` and `second` run side by side, each on a thread of its own; returns both results.
/// Thread: control (it starts and joins the threads).
func sideBySide<A: Sendable, B: Sendable>(_ first: @escaping @Sendable () -> A, _ second: @escaping @Sendable () -> B)
    -> (A, B)
{
    var a: A?, b: B?
    inOrder(count: 2, threads: 2, make: { $0 == 0 ? Either<A, B>.first(first()) : .second(second()) }) { _, made in
        switch made {
        case .first(let value): a = value
        case .second(let value): b = value
        }
    }
    return (a!, b!)
}

/// One of two values (`sideBySide`'s). Thread: any.
private enum Either<A: Sendable, B: Sendable>: Sendable {
    case first(A), second(B)
}

/// The values being made (`inOrder`): which is next, and the made ones waiting to be taken.
/// Thread: `work` on the makers, `take` and `didTake` on control.
private final class OrderedWork<Value: Sendable>: ThreadWork, @unchecked Sendable {
    private let count: Int
    private let window: Int
    private let make: @Sendable (Int) -> Value
    private var waiting: [Value?]
    /// The next value to make, and the number taken.
    private var next = 0
    private var takenCount = 0
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init(count: Int, window: Int, make: @escaping @Sendable (Int) -> Value) {
        self.count = count
        self.window = window
        self.make = make
        waiting = Array(repeating: nil, count: count)
        super.init()
        pthread_mutex_init(lock, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        changed.deallocate()
    }

    /// Makes values in order until none is left.
    override func work() {
        pthread_mutex_lock(lock)
        while next < count {
            // At most `window` made values not taken (a decoded file as large as it will be in the bank).
            if next >= takenCount + window {
                pthread_cond_wait(changed, lock)
                continue
            }
            let index = next
            next += 1
            pthread_mutex_unlock(lock)
            let result = make(index)
            pthread_mutex_lock(lock)
            waiting[index] = result
            pthread_cond_broadcast(changed)
        }
        pthread_mutex_unlock(lock)
    }

    /// Value `index` made (waiting for it); values are taken in order.
    func take(_ index: Int) -> Value {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while waiting[index] == nil { pthread_cond_wait(changed, lock) }
        let result = waiting[index]!
        waiting[index] = nil
        return result
    }

    /// Value `index` is taken (a decoded file in the bank, its copy gone): the threads may
    /// start another.
    func didTake(_ index: Int) {
        pthread_mutex_lock(lock)
        takenCount = index + 1
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(lock)
    }
}
