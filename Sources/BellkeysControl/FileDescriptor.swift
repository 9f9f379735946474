/// A file descriptor of the system's, as the live loop waits on it (`poll`): what a device hands
/// the loop is this value, never a bare integer that might be a count or a signal number.
/// Thread: any.
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
}
