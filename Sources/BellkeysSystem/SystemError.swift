import Glibc

/// A failed system call: the call and its errno.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var code: Int32

    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
