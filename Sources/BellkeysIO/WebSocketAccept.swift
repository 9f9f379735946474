import BellkeysClassroom
import CCrypto

// The WebSocket handshake's accept key, with libcrypto (OpenSSL): BellkeysClassroom checks the
// request and stays pure Swift; the hashing is here, with the rest of the C libraries.

/// A libcrypto call that failed: the operation, and OpenSSL's own message (ERR_error_string_n).
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var message: String
    public var description: String { "\(operation): \(message)" }

    /// The error of `operation`, with the message of OpenSSL's oldest queued error (the queue
    /// is then emptied, so the next failure is not told this one's).
    init(operation: String) {
        self.operation = operation
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else {
            message = "no reason given"
            return
        }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The `Sec-WebSocket-Accept` value for a client's key (RFC 6455, 4.2.2): the base64 of the
/// SHA-1 of the key followed by the protocol's GUID. Thread: any.
public func webSocketAccept(key: String) throws(CryptoError) -> String {
    base64Encode(try sha1(Array((key + webSocketKeyGUID).utf8)))
}

/// The SHA-1 of `message` (FIPS 180-4), 20 bytes. Used only for the accept key, as RFC 6455
/// asks: nothing secret. Thread: any. Wraps EVP_Digest with EVP_sha1.
public func sha1(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var size: UInt32 = 0
    let status = message.withUnsafeBytes { data in
        digest.withUnsafeMutableBufferPointer {
            EVP_Digest(data.baseAddress, data.count, $0.baseAddress, &size, EVP_sha1(), nil)
        }
    }
    guard status == 1, size == 20 else { throw CryptoError(operation: "EVP_Digest (SHA-1)") }
    return Array(digest.prefix(20))
}

/// `bytes` in base64 (RFC 4648: the standard alphabet, padded, one line). Thread: any. Wraps
/// EVP_EncodeBlock.
public func base64Encode(_ bytes: [UInt8]) -> String {
    // 4 characters for every 3 bytes begun, and the NUL EVP_EncodeBlock ends them with.
    var text = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
    let count = bytes.withUnsafeBufferPointer { input in
        text.withUnsafeMutableBufferPointer { EVP_EncodeBlock($0.baseAddress, input.baseAddress, Int32(input.count)) }
    }
    precondition(count == text.count - 1, "EVP_EncodeBlock wrote \(count) characters of \(text.count - 1)")
    return String(decoding: text.prefix(Int(count)), as: UTF8.self)
}
