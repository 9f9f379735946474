// The classroom server's HTTP, read strictly: a browser asks for a page or a WebSocket with a
// GET and nothing else. Anything reachable over the network is hostile input, so the reader
// takes at most `HTTPRequestHead.maximumBytes`, only CRLF line ends, no folded headers, no
// bodies, no duplicate headers that decide anything, and answers everything else with the
// status that says why. Pure Swift, no I/O: the socket loop (BellkeysClassroomServer's WebServer) hands it
// the bytes read so far.

/// A request's head: its request line and headers.
public struct HTTPRequestHead: Equatable, Sendable {
    public var method: String
    /// The request target as sent: a path, perhaps with a query ("/teacher?key=...").
    public var target: String
    /// "HTTP/1.1" or "HTTP/1.0".
    public var version: String
    /// The headers in order, names in lower case.
    public var headers: [HTTPHeader]

    /// The longest head read; a browser's GET is under 1 KiB.
    public static let maximumBytes = 8_192
    /// The most headers read.
    public static let maximumHeaders = 64
    /// The longest request target.
    public static let maximumTargetBytes = 1_024

    /// The value of the header `name` (lower case), or nil.
    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// The path without its query.
    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }

    /// The value of `name` in the query ("?key=abc&x=1"), or nil.
    public func query(_ name: String) -> Substring? {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        for pair in parts[1].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if kv[0] == name { return kv.count == 2 ? kv[1] : "" }
        }
        return nil
    }

    /// Whether the comma-separated header `name` holds `token` (case-insensitively), as
    /// `Connection: keep-alive, Upgrade` holds "upgrade".
    public func headerHasToken(_ name: String, _ token: String) -> Bool {
        guard let value = header(name) else { return false }
        return value.split(separator: ",").contains { $0.trimmingSpaces().lowercased() == token }
    }
}

public struct HTTPHeader: Equatable, Sendable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What `scanHTTPRequestHead` found in the bytes read so far.
public enum HTTPHeadScan: Equatable, Sendable {
    /// The head has not ended yet: read more (it is within the limit so far).
    case incomplete
    /// A whole head, `length` bytes long with its blank line.
    case complete(HTTPRequestHead, length: Int)
    /// Refused: answer `status` (400, 405, 413, 414, 431, 505) with `reason`, and close.
    case refused(status: Int, reason: String)
}

/// Headers that decide what happens (where the socket goes, who is asking): refused if sent
/// twice, as a smuggler would.
private let singleHeaders: Set<String> = [
    "host", "origin", "upgrade", "sec-websocket-key", "sec-websocket-version",
    "content-length", "transfer-encoding", "connection",
]

/// Reads a request head from the start of `bytes`.
public func scanHTTPRequestHead(_ bytes: ArraySlice<UInt8>) -> HTTPHeadScan {
    // Find the blank line within the limit.
    let cr: UInt8 = 13, lf: UInt8 = 10
    var end: Int?
    var i = bytes.startIndex
    while i < bytes.endIndex {
        let b = bytes[i]
        if b == lf {
            // Every line ends in CRLF: a bare LF is refused (it splits requests differently in
            // different readers).
            guard i > bytes.startIndex, bytes[i - 1] == cr else {
                return .refused(status: 400, reason: "a line ends in LF without CR")
            }
            if i - bytes.startIndex >= 3, bytes[i - 2] == lf, bytes[i - 3] == cr {
                end = i + 1
                break
            }
        } else if b == cr, i + 1 < bytes.endIndex, bytes[i + 1] != lf {
            return .refused(status: 400, reason: "a CR not followed by LF")
        }
        i += 1
        if i - bytes.startIndex > HTTPRequestHead.maximumBytes {
            return .refused(status: 431, reason: "the request head is over \(HTTPRequestHead.maximumBytes) bytes")
        }
    }
    guard let end else { return .incomplete }
    let lines = bytes[bytes.startIndex..<(end - 4)].split(separator: cr, omittingEmptySubsequences: false).map { line in
        line.first == lf ? line.dropFirst() : line
    }
    // The request line: METHOD SP target SP version.
    let request = lines[0].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
    guard request.count == 3, !request[0].isEmpty,
        request[0].allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }), request[0].count <= 16
    else {
        return .refused(status: 400, reason: "the request line is not METHOD TARGET VERSION")
    }
    let version = String(decoding: request[2], as: UTF8.self)
    guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
        return .refused(
            status: request[2].starts(with: "HTTP/".utf8) ? 505 : 400, reason: "the version is not HTTP/1.1")
    }
    guard request[1].count <= HTTPRequestHead.maximumTargetBytes else {
        return .refused(status: 414, reason: "the target is over \(HTTPRequestHead.maximumTargetBytes) bytes")
    }
    guard request[1].first == UInt8(ascii: "/"), request[1].allSatisfy({ (0x21...0x7E).contains($0) }) else {
        return .refused(status: 400, reason: "the target is not a path")
    }
    var headers: [HTTPHeader] = []
    for line in lines.dropFirst() {
        guard headers.count < HTTPRequestHead.maximumHeaders else {
            return .refused(status: 431, reason: "more than \(HTTPRequestHead.maximumHeaders) headers")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            return .refused(status: 400, reason: "a header line has no name")
        }
        let name = line[line.startIndex..<colon]
        guard name.allSatisfy(isTokenByte) else { return .refused(status: 400, reason: "a header name is not a token") }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 32 || first == 9 { value = value.dropFirst() }
        while let last = value.last, last == 32 || last == 9 { value = value.dropLast() }
        // Visible ASCII, space, tab and obs-text; no controls (NUL above all).
        guard value.allSatisfy({ $0 == 9 || $0 >= 32 && $0 != 127 }) else {
            return .refused(status: 400, reason: "a header value has control bytes")
        }
        let header = HTTPHeader(
            name: String(decoding: name, as: UTF8.self).lowercased(), value: String(decoding: value, as: UTF8.self))
        if singleHeaders.contains(header.name), headers.contains(where: { $0.name == header.name }) {
            return .refused(status: 400, reason: "\(header.name) is sent twice")
        }
        headers.append(header)
    }
    let head = HTTPRequestHead(
        method: String(decoding: request[0], as: UTF8.self), target: String(decoding: request[1], as: UTF8.self),
        version: version, headers: headers)
    // No bodies: nothing here takes one, and a body unread would be read as the next request.
    if head.header("transfer-encoding") != nil {
        return .refused(status: 413, reason: "a request body (transfer-encoding)")
    }
    if let length = head.header("content-length"), length != "0" {
        return .refused(status: 413, reason: "a request body (content-length)")
    }
    guard head.method == "GET" || head.method == "HEAD" else {
        return .refused(status: 405, reason: "\(head.method) is not served; only GET")
    }
    if version == "HTTP/1.1", head.header("host") == nil { return .refused(status: 400, reason: "no Host header") }
    return .complete(head, length: end - bytes.startIndex)
}

private func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default: return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

extension StringProtocol {
    func trimmingSpaces() -> Substring {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}

/// The reason phrase of the statuses the server sends.
public func httpReason(_ status: Int) -> String {
    switch status {
    case 101: "Switching Protocols"
    case 200: "OK"
    case 204: "No Content"
    case 400: "Bad Request"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 413: "Content Too Large"
    case 414: "URI Too Long"
    case 421: "Misdirected Request"
    case 426: "Upgrade Required"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 503: "Service Unavailable"
    case 505: "HTTP Version Not Supported"
    default: "Error"
    }
}

/// A whole response: status line, headers, body. Every response closes its connection (a
/// page is one request; the socket stays open only as a WebSocket), is never cached, and keeps
/// the page to what bellkeys serves (no script, style or image from elsewhere).
public func httpResponse(
    status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
    extraHeaders: [HTTPHeader] = [], omitBody: Bool = false
) -> [UInt8] {
    var head = "HTTP/1.1 \(status) \(httpReason(status))\r\n"
    head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
    head += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
    head +=
        "Content-Security-Policy: default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        + "img-src 'self' data:; connect-src 'self' ws:; frame-ancestors 'none'\r\n"
    for header in extraHeaders { head += "\(header.name): \(header.value)\r\n" }
    head += "\r\n"
    return Array(head.utf8) + (omitBody ? [] : body)
}
