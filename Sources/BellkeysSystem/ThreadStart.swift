import Glibc

/// The stack of every thread bellkeys starts: 1 MiB, where glibc's default is 8 MiB. A live
/// session locks its memory (`lockMemory`), which makes every mapped stack resident in full,
/// and glibc keeps the stacks of threads that have ended (the sample loaders') for the next
/// ones: at 8 MiB each, two stacks were 16 MiB of a live session's 58 MiB (Tests/VM/run memory).
/// The deepest use is far smaller (JSON nesting is bounded; the render path does not recurse).
public let threadStackBytes = 1 << 20

/// Starts a thread running `body(context)` with a `threadStackBytes` stack and, when `configure`
/// is given, the attributes it sets (a real-time policy). Returns pthread_create's status.
package func startThread(
    _ handle: inout pthread_t, context: UnsafeMutableRawPointer?,
    configure: ((inout pthread_attr_t) -> Void)? = nil,
    _ body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
) -> Int32 {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, threadStackBytes)
    configure?(&attributes)
    return pthread_create(&handle, &attributes, body, context)
}
