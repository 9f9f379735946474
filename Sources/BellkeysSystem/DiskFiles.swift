import BellkeysFormats
import Glibc

/// The message of a C `errno`.
package func errnoMessage(_ code: Int32) -> String { String(cString: strerror(code)) }

/// Reads a whole file, refusing files over `limit` bytes. Thread: control.
public func readFile(_ path: String, limit: Int = 64 << 20, what: String = "file") throws(FileError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 {
        let code = errno
        throw FileError(
            path: path, operation: "open the \(what)", message: errnoMessage(code),
            fix: code == ENOENT
                ? "check the path (it is taken relative to the current folder)"
                : "check that the file is readable by this user")
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
        throw FileError(
            path: path, operation: "inspect the \(what)", message: errnoMessage(errno), fix: "check the file")
    }
    if (info.st_mode & S_IFMT) == S_IFDIR {
        throw FileError(
            path: path, operation: "read the \(what)", message: "it is a folder",
            fix: "name a file, not a folder")
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            throw FileError(
                path: path, operation: "read the \(what)", message: errnoMessage(errno), fix: "check the file")
        }
        if n == 0 { return bytes }
        bytes += chunk[0..<n]
        if bytes.count > limit {
            throw FileError(
                path: path, operation: "read the \(what)", message: "it is larger than \(limit >> 20) MiB",
                fix: "check that this is the right file")
        }
    }
}

/// Whether a regular file exists at `path`.
public func fileExists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
}

/// Whether `path` names a folder.
public func isFolder(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

/// Where the default map lives, in order: `$BELLKEYS_SAMPLES/tags.json` if set;
/// `../share/bellkeys/tags.json` beside the running executable (`/usr/share/bellkeys` for the
/// packaged `/usr/bin/bellkeys`, `~/.local/share/bellkeys` for `~/.local/bin/bellkeys`);
/// `Samples/tags.json` in the executable's folder or any folder above it (a checkout's
/// `.build/release/bellkeys`); and, for a binary built from a checkout, that checkout's
/// `Samples/tags.json` (so a build with another `--scratch-path` finds it too). The package is
/// built with `-DBELLKEYS_INSTALLED`, which leaves the last one out.
public func defaultMapCandidates() -> [String] {
    var candidates: [String] = []
    if let dir = getenv("BELLKEYS_SAMPLES") { candidates.append(resolve("tags.json", from: String(cString: dir))) }
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if n > 0 {
        let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var dir = directoryName(exe)
        candidates.append(dir + "/../share/bellkeys/tags.json")
        for _ in 0..<6 {
            candidates.append(dir == "/" ? "/Samples/tags.json" : dir + "/Samples/tags.json")
            if dir == "/" { break }
            dir = directoryName(dir)
        }
    }
    #if !BELLKEYS_INSTALLED
    // This file is <checkout>/Sources/BellkeysSystem/DiskFiles.swift.
    let checkout = directoryName(directoryName(directoryName(#filePath)))
    let bundled = checkout + "/Samples/tags.json"
    if !candidates.contains(bundled) { candidates.append(bundled) }
    #endif
    return candidates
}

/// What is wrong with `BELLKEYS_SAMPLES`, if it is set and names no folder with a tags.json in
/// it (nil: unset, or fine). The default map is then not looked for elsewhere: a folder the user
/// named is never passed over in silence. Thread: control.
public func samplesFolderProblem() -> String? {
    guard let value = getenv("BELLKEYS_SAMPLES").map({ String(cString: $0) }) else { return nil }
    let map = resolve("tags.json", from: value)
    if fileExists(map) { return nil }
    let why =
        value.isEmpty
        ? "is empty"
        : isFolder(value) ? "names \(value), which has no tags.json" : "names \(value), which is not a folder"
    return
        "BELLKEYS_SAMPLES \(why)\n    fix: set it to the folder that holds your bells' tags.json, or unset it (unset BELLKEYS_SAMPLES) for the bundled bells"
}

/// The first existing default map, or nil.
public func findDefaultMap() -> String? { defaultMapCandidates().first(where: fileExists) }

/// `examples/plain.json` beside the default map: the bundled bells alone (centred, dry, one
/// timbre), which the benchmarks play.
public func findPlainMap() -> String? {
    guard let map = findDefaultMap() else { return nil }
    let folder = map.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    return folder + "/examples/plain.json"
}

/// `path` as it is, or else with each part matched to an entry of its folder ignoring case (many
/// instruments were made on Windows, whose file names ignore case); nil if none matches.
/// Thread: control.
public func findCaseInsensitively(_ path: String) -> String? {
    if fileExists(path) { return path }
    let absolute = path.hasPrefix("/")
    var found = absolute ? "/" : "."
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
        let name = String(part)
        let candidate = found == "/" ? "/" + name : found + "/" + name
        var info = stat()
        if name == "." || name == ".." || stat(candidate, &info) == 0 {
            found = candidate
            continue
        }
        guard let directory = opendir(found) else { return nil }
        defer { closedir(directory) }
        var match: String?
        let wanted = name.lowercased()
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if entryName.lowercased() == wanted {
                match = entryName
                break
            }
        }
        guard let match else { return nil }
        found = found == "/" ? "/" + match : found + "/" + match
    }
    let result = absolute ? found : String(found.dropFirst(2))
    return fileExists(result) ? result : nil
}

extension FileFinder {
    /// The file system: names matched ignoring case (`findCaseInsensitively`), files read whole
    /// (`readFile`). Thread: control.
    public static let disk = FileFinder(
        find: { findCaseInsensitively($0) },
        read: { path, limit, what throws(FileError) in try readFile(path, limit: limit, what: what) })
}
