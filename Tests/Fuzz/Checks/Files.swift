import Glibc

/// The regular files at `path`: the file itself, or those directly inside a folder, sorted.
public func filesAt(_ path: String) -> [String] {
    guard let directory = opendir(path) else { return [path] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if !name.hasPrefix(".") { names.append(path + "/" + name) }
    }
    return names.sorted()
}

/// The bytes of the file at `path`, or nil if it cannot be read.
public func contents(of path: String) -> [UInt8]? {
    guard let stream = fopen(path, "rb") else { return nil }
    defer { fclose(stream) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = fread(&chunk, 1, chunk.count, stream)
        bytes += chunk[0..<n]
        if n < chunk.count { return ferror(stream) == 0 ? bytes : nil }
    }
}
