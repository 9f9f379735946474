// WebSocket (RFC 6455) as far as the classroom needs it, read strictly: the opening handshake's
// checks, the accept key (WebSocketAccept.swift), client frames in, server frames out. Client
// frames must be masked, unfragmented, without extensions, and at most `maximumPayload` bytes,
// which is checked from the frame's length field before any of the payload is kept. Anything
// else is answered with the close code that says why. Pure Swift, no I/O.

/// A frame's opcode.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0, text = 1, binary = 2, close = 8, ping = 9, pong = 10
}

/// Close codes sent.
public enum WebSocketClose {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupported: UInt16 = 1003
    public static let invalidText: UInt16 = 1007
    public static let policy: UInt16 = 1008
    public static let tooBig: UInt16 = 1009
    public static let tryAgainLater: UInt16 = 1013
}

/// What `scanWebSocketFrame` found.
public enum WebSocketFrameScan: Equatable, Sendable {
    /// Not a whole frame yet: read more.
    case incomplete
    /// A whole frame, `length` bytes with its header; the payload unmasked.
    case frame(opcode: WebSocketOpcode, payload: [UInt8], length: Int)
    /// Refused: send a close frame with `code` and `reason`, then close.
    case refused(code: UInt16, reason: String)
}

/// Reads one client frame from the start of `bytes`; payloads over `maximumPayload` bytes are
/// refused from the header alone.
public func scanWebSocketFrame(_ bytes: ArraySlice<UInt8>, maximumPayload: Int) -> WebSocketFrameScan {
    guard bytes.count >= 2 else { return .incomplete }
    let b0 = bytes[bytes.startIndex], b1 = bytes[bytes.startIndex + 1]
    let fin = b0 & 0x80 != 0
    guard b0 & 0x70 == 0 else {
        return .refused(code: WebSocketClose.protocolError, reason: "reserved bits set (no extension was agreed)")
    }
    guard let opcode = WebSocketOpcode(rawValue: b0 & 0x0F) else {
        return .refused(code: WebSocketClose.protocolError, reason: "opcode \(b0 & 0x0F) is not defined")
    }
    guard b1 & 0x80 != 0 else {
        return .refused(code: WebSocketClose.protocolError, reason: "a client frame is not masked")
    }
    var length = UInt64(b1 & 0x7F)
    var offset = 2
    if length == 126 {
        guard bytes.count >= 4 else { return .incomplete }
        length = UInt64(bytes[bytes.startIndex + 2]) << 8 | UInt64(bytes[bytes.startIndex + 3])
        offset = 4
    } else if length == 127 {
        guard bytes.count >= 10 else { return .incomplete }
        length = 0
        for k in 2..<10 { length = length << 8 | UInt64(bytes[bytes.startIndex + k]) }
        offset = 10
    }
    let isControl = opcode.rawValue >= 8
    if isControl {
        guard fin, length <= 125 else {
            return .refused(
                code: WebSocketClose.protocolError, reason: "a control frame is fragmented or over 125 bytes")
        }
    } else {
        guard opcode != .continuation, fin else {
            return .refused(
                code: WebSocketClose.unsupported,
                reason: "fragmented messages are not accepted; send each message whole")
        }
        guard opcode == .text else {
            return .refused(
                code: WebSocketClose.unsupported, reason: "binary messages are not accepted; send JSON text")
        }
        guard length <= UInt64(maximumPayload) else {
            return .refused(
                code: WebSocketClose.tooBig, reason: "a message of \(length) bytes; at most \(maximumPayload)")
        }
    }
    let total = offset + 4 + Int(length)
    guard bytes.count >= total else { return .incomplete }
    let maskStart = bytes.startIndex + offset
    var payload = [UInt8](repeating: 0, count: Int(length))
    for k in 0..<Int(length) {
        payload[k] = bytes[maskStart + 4 + k] ^ bytes[maskStart + k & 3]
    }
    if opcode == .text {
        guard String(validating: payload, as: UTF8.self) != nil else {
            return .refused(code: WebSocketClose.invalidText, reason: "a text message is not UTF-8")
        }
    }
    return .frame(opcode: opcode, payload: payload, length: total)
}

/// A server frame (unmasked, whole) carrying `payload`.
public func webSocketFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
    var frame: [UInt8] = [0x80 | opcode.rawValue]
    frame.reserveCapacity(payload.count + 10)
    if payload.count < 126 {
        frame.append(UInt8(payload.count))
    } else if payload.count <= 0xFFFF {
        frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    } else {
        frame.append(127)
        for k in (0..<8).reversed() {
            frame.append(UInt8(truncatingIfNeeded: UInt64(payload.count) >> (8 * UInt64(k))))
        }
    }
    return frame + payload
}

/// A close frame with `code` and a reason (cut to fit a control frame's 125 bytes).
public func webSocketCloseFrame(_ code: UInt16, reason: String) -> [UInt8] {
    var payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
    var text = Array(reason.utf8.prefix(123))
    // Never cut a character in half: the reason must stay UTF-8.
    while !text.isEmpty, String(validating: text, as: UTF8.self) == nil { text.removeLast() }
    payload += text
    return webSocketFrame(.close, payload)
}

// MARK: The opening handshake

/// Why an upgrade request was refused: the HTTP status and what to say.
public struct WebSocketRefusal: Error, Equatable, Sendable {
    public var status: Int
    public var reason: String
}

/// The GUID RFC 6455 appends to a client's key before hashing it for `Sec-WebSocket-Accept`.
public let webSocketKeyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

/// Checks a request that asks to become a WebSocket and returns its `Sec-WebSocket-Key`, or
/// why not. The Origin must be the page's own (the Host it was served from), so a page from
/// anywhere else cannot ring the bells through a pupil's browser. The accept value is
/// `webSocketAccept(key:)`'s.
public func webSocketKey(for head: HTTPRequestHead) throws(WebSocketRefusal) -> String {
    guard head.method == "GET", head.version == "HTTP/1.1" else {
        throw WebSocketRefusal(status: 400, reason: "a WebSocket opens with GET over HTTP/1.1")
    }
    guard head.header("upgrade")?.lowercased() == "websocket", head.headerHasToken("connection", "upgrade") else {
        throw WebSocketRefusal(status: 426, reason: "this address is a WebSocket (Upgrade: websocket)")
    }
    guard head.header("sec-websocket-version") == "13" else {
        throw WebSocketRefusal(status: 426, reason: "WebSocket version 13 only")
    }
    guard let key = head.header("sec-websocket-key"), isBase64Of16Bytes(key) else {
        throw WebSocketRefusal(status: 400, reason: "Sec-WebSocket-Key is not 16 bytes in base64")
    }
    guard let origin = head.header("origin"), let host = head.header("host"),
        origin.lowercased() == "http://" + host.lowercased()
    else {
        throw WebSocketRefusal(status: 403, reason: "the page is not this server's (Origin is not http:// + Host)")
    }
    return key
}

/// The 101 response that opens the WebSocket.
public func webSocketUpgradeResponse(accept: String) -> [UInt8] {
    Array(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
            .utf8)
}

/// Whether `text` is 16 bytes in padded base64: 22 characters of the alphabet, then "==" (the
/// key is only checked, never decoded: nothing in it is used but its text).
func isBase64Of16Bytes(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
    return bytes[..<22].allSatisfy { c in
        (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || c == 0x2B || c == 0x2F
    }
}
