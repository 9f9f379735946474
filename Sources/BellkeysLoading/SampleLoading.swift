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
    let threadCount = max(1, min(threads, requests.count))
    guard threadCount > 1 else {
        return requests.indices.map { store(decode($0), into: bank) }
    }
    let queue = DecodingQueue(count: requests.count, window: threadCount, decode: decode)
    var handles: [pthread_t] = []
    for _ in 0..<threadCount {
        let context = Unmanaged.passRetained(queue).toOpaque()
        var handle = pthread_t()
        let status = startThread(
            &handle, context: context,
            { context in
                Unmanaged<DecodingQueue>.fromOpaque(context!).takeRetainedValue().work()
                return nil
            })
        precondition(status == 0, "cannot start a thread to decode samples: \(String(cString: strerror(status)))")
        handles.append(handle)
    }
    var results: [Result<LoadedSample, SampleError>] = []
    results.reserveCapacity(requests.count)
    for i in requests.indices {
        results.append(store(queue.take(i), into: bank))
        queue.didStore(i)
    }
    for handle in handles { pthread_join(handle, nil) }
    return results
}

/// A decoded file added to `bank`, or why it could not be.
private func store(_ decoded: Result<DecodedSample, SampleError>, into bank: SampleBank)
    -> Result<LoadedSample, SampleError>
{
    decoded.flatMap { sample in Result { () throws(SampleError) in try sample.store(into: bank) } }
}

/// The files being decoded: which is next, and the decoded ones waiting for the bank.
/// Thread: `work` on the decoders, `take` and `didStore` on control (which fills the bank).
private final class DecodingQueue: @unchecked Sendable {
    private let count: Int
    private let window: Int
    private let decode: @Sendable (Int) -> Result<DecodedSample, SampleError>
    private var waiting: [Result<DecodedSample, SampleError>?]
    /// The next file to decode, and the number the bank holds.
    private var next = 0
    private var storedCount = 0
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init(count: Int, window: Int, decode: @escaping @Sendable (Int) -> Result<DecodedSample, SampleError>) {
        self.count = count
        self.window = window
        self.decode = decode
        waiting = Array(repeating: nil, count: count)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        changed.deallocate()
    }

    /// Decodes files in order until none is left.
    func work() {
        pthread_mutex_lock(lock)
        while next < count {
            // At most `window` decoded files outside the bank (each as large as it will be there).
            if next >= storedCount + window {
                pthread_cond_wait(changed, lock)
                continue
            }
            let index = next
            next += 1
            pthread_mutex_unlock(lock)
            let result = decode(index)
            pthread_mutex_lock(lock)
            waiting[index] = result
            pthread_cond_broadcast(changed)
        }
        pthread_mutex_unlock(lock)
    }

    /// File `index` decoded (waiting for it); files are taken in order.
    func take(_ index: Int) -> Result<DecodedSample, SampleError> {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        while waiting[index] == nil { pthread_cond_wait(changed, lock) }
        let result = waiting[index]!
        waiting[index] = nil
        return result
    }

    /// File `index` is in the bank (its decoded copy gone): the threads may start another.
    func didStore(_ index: Int) {
        pthread_mutex_lock(lock)
        storedCount = index + 1
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(lock)
    }
}
