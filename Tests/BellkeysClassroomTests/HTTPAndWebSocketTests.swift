import BellkeysClassroom
import Testing

private func head(_ text: String) -> HTTPHeadScan { scanHTTPRequestHead(Array(text.utf8)[...]) }

/// A masked client frame, as a browser sends it.
private func clientFrame(
    _ payload: [UInt8], opcode: UInt8 = 1, fin: Bool = true, mask: [UInt8] = [0x12, 0x34, 0x56, 0x78],
    masked: Bool = true, rsv: UInt8 = 0
) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
    let m: UInt8 = masked ? 0x80 : 0
    if payload.count < 126 {
        frame.append(m | UInt8(payload.count))
    } else if payload.count < 65536 {
        frame += [m | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    } else {
        frame.append(m | 127)
        for k in (0..<8).reversed() { frame.append(UInt8(truncatingIfNeeded: payload.count >> (8 * k))) }
    }
    if masked { frame += mask }
    frame += payload.enumerated().map { masked ? $0.element ^ mask[$0.offset % 4] : $0.element }
    return frame
}

@Suite struct HTTPRequestHeads {
    @Test func aBrowsersGetIsRead() throws {
        let text =
            "GET /teacher?key=abc&x=1 HTTP/1.1\r\nHost: 192.168.1.5:8080\r\nUser-Agent: Mozilla/5.0\r\nAccept:  text/html \r\n\r\nrest"
        guard case .complete(let h, let length) = head(text) else {
            Issue.record("not read: \(head(text))")
            return
        }
        #expect(length == text.utf8.count - 4)
        #expect(h.method == "GET" && h.target == "/teacher?key=abc&x=1" && h.version == "HTTP/1.1")
        #expect(h.path == "/teacher")
        #expect(h.query("key") == "abc" && h.query("x") == "1" && h.query("y") == nil)
        #expect(h.header("host") == "192.168.1.5:8080")
        #expect(h.header("accept") == "text/html")
        #expect(h.headers.count == 3)
    }

    @Test func anUnfinishedHeadWaits() {
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\n") == .incomplete)
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\n\r") == .incomplete)
        #expect(head("") == .incomplete)
    }

    @Test func everyRefusalHasItsStatus() {
        func status(_ text: String) -> Int? {
            if case .refused(let status, _) = head(text) { return status }
            return nil
        }
        #expect(status("GET / HTTP/1.1\nHost: a\n\n") == 400) // bare LF
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n") == 400) // obs-fold: no name
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400) // Host twice
        #expect(status("GET / HTTP/1.1\r\nOrigin: a\r\nOrigin: b\r\nHost: a\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\n\r\n") == 400) // no Host
        #expect(status("GET / HTTP/2.0\r\nHost: a\r\n\r\n") == 505)
        #expect(status("GET / FTP/1.1\r\nHost: a\r\n\r\n") == 400)
        #expect(status("POST / HTTP/1.1\r\nHost: a\r\n\r\n") == 405)
        #expect(status("get / HTTP/1.1\r\nHost: a\r\n\r\n") == 400) // methods are upper case
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n") == 413)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n") == 413)
        #expect(status("GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n") == 400) // absolute form
        #expect(status("GET /" + String(repeating: "a", count: 1_100) + " HTTP/1.1\r\nHost: a\r\n\r\n") == 414)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n") == 400) // a control byte
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n") == 400)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X-A: 1\r\n", count: 65) + "\r\n") == 431)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 8_200)) == 431)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n") == 400) // a lone CR
    }

    @Test func connectionTokensAreFoundInLists() throws {
        guard case .complete(let h, _) = head("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\n\r\n")
        else {
            Issue.record("not read")
            return
        }
        #expect(h.headerHasToken("connection", "upgrade"))
        #expect(!h.headerHasToken("connection", "close"))
    }

    @Test func aResponseSaysItsLengthAndCloses() {
        let text = String(decoding: httpResponse(status: 404, body: Array("gone\n".utf8)), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(text.contains("\r\nContent-Length: 5\r\n") && text.contains("\r\nConnection: close\r\n"))
        #expect(text.contains("frame-ancestors 'none'") && text.hasSuffix("\r\n\r\ngone\n"))
        let head = String(decoding: httpResponse(status: 200, body: Array("abc".utf8), omitBody: true), as: UTF8.self)
        #expect(head.contains("Content-Length: 3") && head.hasSuffix("\r\n\r\n"))
    }
}

@Suite struct WebSocketFrames {
    @Test func theAcceptKeyIsRFC6455s() throws {
        // RFC 6455, section 1.3.
        let text =
            "GET /ws HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://server.example.com\r\nSec-WebSocket-Version: 13\r\n\r\n"
        guard case .complete(let h, _) = head(text) else {
            Issue.record("not read")
            return
        }
        // The key checked, and the accept value RFC 6455 gives for it.
        let key = try webSocketKey(for: h)
        #expect(key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(webSocketAccept(key: key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(
            String(decoding: webSocketUpgradeResponse(accept: "x"), as: UTF8.self)
                == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n"
        )
    }

    @Test func aPageFromElsewhereIsRefused() {
        func refusal(
            _ extra: String, origin: String? = "http://10.0.0.2:8080", key: String = "dGhlIHNhbXBsZSBub25jZQ=="
        ) -> Int? {
            var text =
                "GET /ws HTTP/1.1\r\nHost: 10.0.0.2:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\n"
            if let origin { text += "Origin: \(origin)\r\n" }
            text += extra + "\r\n"
            guard case .complete(let h, _) = head(text) else { return -1 }
            do {
                _ = try webSocketKey(for: h)
                return nil
            } catch { return error.status }
        }
        #expect(refusal("Sec-WebSocket-Version: 13\r\n") == nil)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", origin: "http://evil.example") == 403)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", origin: "http://10.0.0.2:8081") == 403)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", origin: nil) == 403)
        #expect(refusal("Sec-WebSocket-Version: 8\r\n") == 426)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", key: "c2hvcnQ=") == 400) // 5 bytes, not 16
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", key: "not base64 at all!!!!!!=") == 400)
        // 16 bytes are 22 characters of the alphabet and "==": one short, one padded too far, one
        // outside the alphabet.
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", key: "dGhlIHNhbXBsZSBub25jZQ=") == 400)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", key: "dGhlIHNhbXBsZSBub25jZ===") == 400)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", key: "dGhlIHNhbXBsZSBub25j-Q==") == 400)
        #expect(refusal("Sec-WebSocket-Version: 13\r\n", key: "AAAAAAAAAAAAAAAAAAAAAA==") == nil)
    }

    @Test func aMaskedTextFrameIsUnmasked() {
        let payload = Array("{\"type\":\"ping\",\"sent\":1}".utf8)
        let frame = clientFrame(payload)
        #expect(
            scanWebSocketFrame(frame[...], maximumPayload: 256)
                == .frame(opcode: .text, payload: payload, length: frame.count))
        // Byte by byte, it waits until the last one.
        for n in 0..<frame.count { #expect(scanWebSocketFrame(frame[0..<n], maximumPayload: 256) == .incomplete) }
        // Two frames back to back: the first alone.
        let two = frame + clientFrame([0x41], mask: [1, 2, 3, 4])
        #expect(
            scanWebSocketFrame(two[...], maximumPayload: 256)
                == .frame(opcode: .text, payload: payload, length: frame.count))
        #expect(
            scanWebSocketFrame(two[frame.count...], maximumPayload: 256)
                == .frame(opcode: .text, payload: [0x41], length: 7))
    }

    @Test func refusalsCarryTheirCloseCodes() {
        func code(_ frame: [UInt8], maximum: Int = 256) -> UInt16? {
            if case .refused(let code, _) = scanWebSocketFrame(frame[...], maximumPayload: maximum) { return code }
            return nil
        }
        #expect(code(clientFrame([0x41], masked: false)) == WebSocketClose.protocolError)
        #expect(code(clientFrame([0x41], rsv: 4)) == WebSocketClose.protocolError)
        #expect(code(clientFrame([0x41], opcode: 3)) == WebSocketClose.protocolError)
        #expect(code(clientFrame([0x41], opcode: 2)) == WebSocketClose.unsupported)
        #expect(code(clientFrame([0x41], fin: false)) == WebSocketClose.unsupported)
        #expect(code(clientFrame([0x41], opcode: 0)) == WebSocketClose.unsupported)
        #expect(code(clientFrame([0xC3, 0x28])) == WebSocketClose.invalidText)
        #expect(code(clientFrame(Array(repeating: 0x20, count: 126), opcode: 9)) == WebSocketClose.protocolError)
        #expect(code(clientFrame([], opcode: 9, fin: false)) == WebSocketClose.protocolError)
        // Too big, known from the header alone: 2 bytes of a 64-bit length are enough.
        #expect(code(Array(clientFrame(Array(repeating: 0x20, count: 257)).prefix(4))) == WebSocketClose.tooBig)
        #expect(code([0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == WebSocketClose.tooBig)
        #expect(code(clientFrame(Array(repeating: 0x20, count: 256))) == nil)
    }

    @Test func serverFramesAreUnmaskedAndWhole() {
        #expect(webSocketFrame(.text, Array("hi".utf8)) == [0x81, 2, 0x68, 0x69])
        let long = webSocketFrame(.text, Array(repeating: 0x61, count: 300))
        #expect(Array(long.prefix(4)) == [0x81, 126, 1, 44] && long.count == 304)
        let huge = webSocketFrame(.binary, Array(repeating: 0, count: 70_000))
        #expect(Array(huge.prefix(10)) == [0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
        // A close reason is cut to fit 125 bytes, never inside a character.
        let close = webSocketCloseFrame(1008, reason: String(repeating: "é", count: 100))
        #expect(close[0] == 0x88 && close[1] == 124 && Array(close[2...3]) == [0x03, 0xF0])
        #expect(String(validating: close[4...], as: UTF8.self) != nil)
    }

    /// The SHA-1 and base64 the accept key is made of, against their standards' examples.
    @Test func sha1AndBase64MatchTheirStandards() throws {
        func hex(_ bytes: [UInt8]) -> String {
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                .joined()
        }
        // FIPS 180 examples, and the two-block message.
        #expect(hex(sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(sha1(Array(repeating: 0x61, count: 60))) == "13d956033d9af449bfe2c4ef78c17c20469c4bf1")
        #expect(hex(sha1(Array(repeating: 0x61, count: 55))) == "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        #expect(
            hex(sha1(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(sha1(Array(repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        // RFC 4648 test vectors.
        for (plain, coded) in [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            #expect(base64Encode(Array(plain.utf8)) == coded)
        }
        // Past EVP_EncodeBlock's 48-byte lines (EVP_EncodeUpdate's): still one line.
        #expect(base64Encode(Array(repeating: 0xFF, count: 60)) == String(repeating: "/", count: 80))
    }
}
