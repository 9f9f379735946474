import Glibc

/// A random key of 16 hex digits (getrandom).
public func randomKey() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<16).map { _ in String(Int.random(in: 0..<16, using: &generator), radix: 16) }.joined()
}

/// The dotted text of an IPv4 address (inet_ntop).
func ipv4Text(_ address: in_addr) -> String {
    var a = address
    var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
    inet_ntop(AF_INET, &a, &text, socklen_t(INET_ADDRSTRLEN))
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// This machine's IPv4 addresses by interface, loopback last: where pupils can reach it.
public func localIPv4Addresses() -> [(interface: String, address: String)] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return [] }
    defer { freeifaddrs(list) }
    var out: [(String, String)] = []
    var p = list
    while let entry = p {
        defer { p = entry.pointee.ifa_next }
        guard let addr = entry.pointee.ifa_addr, addr.pointee.sa_family == sa_family_t(AF_INET),
            entry.pointee.ifa_flags & UInt32(IFF_UP) != 0
        else { continue }
        let address = addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4Text($0.pointee.sin_addr) }
        out.append((String(cString: entry.pointee.ifa_name), address))
    }
    return out.sorted { ($0.1.hasPrefix("127.") ? 1 : 0) < ($1.1.hasPrefix("127.") ? 1 : 0) }
}
