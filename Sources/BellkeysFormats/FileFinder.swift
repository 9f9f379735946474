// How the compile step reaches the files an instrument names, and the two plain values of file
// handling that every reader shares: a failed file operation and a path taken from a folder.

/// A failed operation on a file, with the C library's message and a fix. Thread: any.
public struct FileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var message: String
    public var fix: String

    public init(path: String, operation: String, message: String, fix: String) {
        self.path = path
        self.operation = operation
        self.message = message
        self.fix = fix
    }

    public var description: String { "\(path): cannot \(operation): \(message)\n    fix: \(fix)" }
}

/// The folder part of a path ("." when there is none).
public func directoryName(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// `relative` taken from folder `base`, unless it is absolute.
public func resolve(_ relative: String, from base: String) -> String {
    if relative.hasPrefix("/") || base == "." { return relative }
    return base.hasSuffix("/") ? base + relative : base + "/" + relative
}

/// The files an instrument's compile step may read, by whole path (it takes a name from the
/// folder of the file that gives it with `resolve(_:from:)`, so messages print the same paths
/// whoever finds them). BellkeysSystem's `FileFinder.disk` reads the file system; a test gives
/// `inMemory` files. Thread: the caller's.
public struct FileFinder: Sendable {
    /// `path` as it is, or else with each part matched ignoring case (many instruments were made
    /// on Windows, whose file names ignore case); nil if no file matches.
    public var find: @Sendable (_ path: String) -> String?
    /// The whole file at `path`, refused over `limit` bytes; `what` names it in the error
    /// ("SFZ file").
    public var read: @Sendable (_ path: String, _ limit: Int, _ what: String) throws(FileError) -> [UInt8]

    public init(
        find: @escaping @Sendable (_ path: String) -> String?,
        read: @escaping @Sendable (_ path: String, _ limit: Int, _ what: String) throws(FileError) -> [UInt8]
    ) {
        self.find = find
        self.read = read
    }

    /// Files held in memory, by whole path: found as they are, else by a path equal ignoring
    /// case (the first in sorted order); a path not held fails as a missing file does on disk.
    public static func inMemory(_ files: [String: [UInt8]]) -> FileFinder {
        let sorted = files.keys.sorted()
        let find: @Sendable (String) -> String? = { path in
            if files[path] != nil { return path }
            let wanted = path.lowercased()
            return sorted.first { $0.lowercased() == wanted }
        }
        return FileFinder(find: find) { path, limit, what throws(FileError) in
            guard let bytes = files[path] else {
                throw FileError(
                    path: path, operation: "open the \(what)", message: "No such file or directory",
                    fix: "check the path (it is taken relative to the current folder)")
            }
            if bytes.count > limit {
                throw FileError(
                    path: path, operation: "read the \(what)", message: "it is larger than \(limit >> 20) MiB",
                    fix: "check that this is the right file")
            }
            return bytes
        }
    }
}

/// A sample file an instrument plays, as its loader asks for it: stereo kept (an SFZ file's) or
/// mixed down (a map's key), and whether a region may loop it (its end is then not faded).
/// Thread: any.
public struct SampleRequest: Sendable, Equatable {
    public var path: String
    public var keepStereo: Bool
    public var mayLoop: Bool

    public init(path: String, keepStereo: Bool = false, mayLoop: Bool = false) {
        self.path = path
        self.keepStereo = keepStereo
        self.mayLoop = mayLoop
    }
}

/// What the regions of a sample take from it once it is stored: its index in the bank, its
/// length there (frames at the bank's rate), and the file's root key and first loop (at the
/// bank's rate), if it gives them. Thread: any.
public struct SampleFacts: Sendable, Equatable {
    public var index: Int
    public var frameCount: Int
    public var rootKey: Int?
    public var loop: ClosedRange<Int>?

    public init(index: Int, frameCount: Int, rootKey: Int? = nil, loop: ClosedRange<Int>? = nil) {
        self.index = index
        self.frameCount = frameCount
        self.rootKey = rootKey
        self.loop = loop
    }
}

/// Why a sample file could not be used: the libsndfile or libsamplerate message and a fix.
/// Thread: any.
public struct SampleError: Error, Sendable {
    public var message: String
    public var fix: String

    public init(message: String, fix: String) {
        self.message = message
        self.fix = fix
    }
}
