// The WebSocket handshake's accept key (RFC 6455, 4.2.2): SHA-1 (FIPS 180-4, 6.1) and base64
// (RFC 4648, 4), in Swift. Nothing secret is computed: the hash only shows the client that the
// server read its handshake. (bellkeys took these from libcrypto before; linking it cost every
// run 1.4 to 1.8 MB of resident memory, measured on Debian 12 and 13, for one hash of 60 bytes.)
// Pure Swift, no I/O.

/// The `Sec-WebSocket-Accept` value for a client's key: the base64 of the SHA-1 of the key
/// followed by the protocol's GUID. Thread: any.
public func webSocketAccept(key: String) -> String {
    base64Encode(sha1(Array((key + webSocketKeyGUID).utf8)))
}

/// The SHA-1 of `message`, 20 bytes. Thread: any.
public func sha1(_ message: [UInt8]) -> [UInt8] {
    // The message, a 1 bit, zeros to 56 bytes past a multiple of 64, and its length in bits
    // (big-endian, 64 bits): whole 64-byte blocks.
    var padded = message
    padded.append(0x80)
    while padded.count % 64 != 56 { padded.append(0) }
    let bits = UInt64(message.count) &* 8
    for shift in stride(from: 56, through: 0, by: -8) {
        padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
    }

    var h0: UInt32 = 0x6745_2301, h1: UInt32 = 0xEFCD_AB89, h2: UInt32 = 0x98BA_DCFE
    var h3: UInt32 = 0x1032_5476, h4: UInt32 = 0xC3D2_E1F0
    var w = [UInt32](repeating: 0, count: 80)
    for block in stride(from: 0, to: padded.count, by: 64) {
        for t in 0..<16 {
            let i = block + 4 * t
            w[t] =
                UInt32(padded[i]) << 24 | UInt32(padded[i + 1]) << 16 | UInt32(padded[i + 2]) << 8
                | UInt32(padded[i + 3])
        }
        for t in 16..<80 { w[t] = rotateLeft(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1) }
        var a = h0, b = h1, c = h2, d = h3, e = h4
        for t in 0..<80 {
            let f: UInt32, k: UInt32
            switch t {
            case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
            }
            let next = rotateLeft(a, 5) &+ f &+ e &+ k &+ w[t]
            e = d
            d = c
            c = rotateLeft(b, 30)
            b = a
            a = next
        }
        h0 = h0 &+ a
        h1 = h1 &+ b
        h2 = h2 &+ c
        h3 = h3 &+ d
        h4 = h4 &+ e
    }
    var digest: [UInt8] = []
    digest.reserveCapacity(20)
    for word in [h0, h1, h2, h3, h4] {
        for shift in stride(from: 24, through: 0, by: -8) {
            digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
        }
    }
    return digest
}

private func rotateLeft(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }

/// `bytes` in base64: the standard alphabet, padded with `=`, one line. Thread: any.
public func base64Encode(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var text: [UInt8] = []
    text.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    while i < bytes.count {
        // Up to 3 bytes as 24 bits, then 4 characters of 6 bits, `=` for those past the end.
        let count = min(3, bytes.count - i)
        var group = UInt32(bytes[i]) << 16
        if count > 1 { group |= UInt32(bytes[i + 1]) << 8 }
        if count > 2 { group |= UInt32(bytes[i + 2]) }
        for position in 0..<4 {
            text.append(position <= count ? alphabet[Int(group >> UInt32(18 - 6 * position) & 63)] : UInt8(ascii: "="))
        }
        i += 3
    }
    return String(decoding: text, as: UTF8.self)
}
