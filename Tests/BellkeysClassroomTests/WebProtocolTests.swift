import BellkeysClassroom
import BellkeysIO
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
        // The key checked here, the accept value from libcrypto (BellkeysIO).
        let key = try webSocketKey(for: h)
        #expect(key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(try webSocketAccept(key: key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
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

    /// libcrypto's SHA-1 and base64 (BellkeysIO), which the accept key is made of.
    @Test func sha1AndBase64MatchTheirStandards() throws {
        func hex(_ bytes: [UInt8]) -> String {
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                .joined()
        }
        // FIPS 180 examples, and the two-block message.
        #expect(hex(try sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(try sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(try sha1(Array(repeating: 0x61, count: 60))) == "13d956033d9af449bfe2c4ef78c17c20469c4bf1")
        #expect(hex(try sha1(Array(repeating: 0x61, count: 55))) == "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        #expect(
            hex(try sha1(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(try sha1(Array(repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
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

@Suite struct ClassroomRoom {
    let bells = (60...72).map { ClassroomBell(note: $0, name: "N\($0)", damps: $0 != 72) }
    var code: RoomCode {
        var g = FixedGenerator()
        return RoomCode(using: &g)
    }

    @Test func joiningTakesTheCodeAndNamesAreMadeUnique() {
        let room = Classroom(bells: bells, code: code)
        #expect(room.code.digits.count == 4)
        guard
            case .joined(let id, let welcome, _) = room.join(
                connection: 1, address: "10.0.0.5", code: room.code.digits, name: "Sam", at: 0)
        else {
            Issue.record("not joined")
            return
        }
        let token = room.devices[0].token
        #expect(token.count == 16 && token.allSatisfy(\.isHexDigit))
        #expect(
            id == 1
                && welcome.hasPrefix(
                    "{\"type\":\"welcome\",\"id\":1,\"name\":\"Sam\",\"resume\":\"\(token)\",\"bells\":[{\"note\":60,")
        )
        guard
            case .joined(_, let second, _) = room.join(
                connection: 2, address: "10.0.0.6", code: room.code.digits, name: "Sam", at: 0)
        else {
            Issue.record("not joined")
            return
        }
        #expect(second.contains("\"name\":\"Sam 2\""))
        let wrong = room.join(
            connection: 3, address: "10.0.0.7", code: "0000" == room.code.digits ? "0001" : "0000", name: "Eve", at: 0)
        guard case .refused(let reply) = wrong else {
            Issue.record("joined with a wrong code")
            return
        }
        #expect(reply.contains("\"why\":\"code\""))
        #expect(room.counters.wrongCodes == 1 && room.devices.count == 2)
        // A sixth guess from one address within the minute is refused unread, even the right code.
        for k in 0..<4 {
            _ = room.join(
                connection: 10 + k, address: "10.0.0.7", code: room.code.digits == "0000" ? "0001" : "0000",
                name: "Eve", at: 1)
        }
        guard
            case .refused(let locked) = room.join(
                connection: 20, address: "10.0.0.7", code: room.code.digits, name: "Eve", at: 2)
        else {
            Issue.record("guessing was not locked")
            return
        }
        #expect(locked.contains("\"why\":\"locked\"") && room.counters.lockedOut == 1 && room.counters.wrongCodes == 5)
    }

    @Test func aDeviceComesBackWithItsBellsAndAStaleTokenIsNoGuess() {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 1, address: "10.0.0.5", code: room.code.digits, name: "Sam", at: 0)
        #expect(room.deal([62, 64], to: 1))
        let token = room.devices[0].token
        // The Wi-Fi dropped; the page comes back on connection 9 with its token.
        guard
            case .joined(let id, let welcome, let replaced) = room.join(
                connection: 9, address: "10.0.0.5", code: room.code.digits,
                name: "Sam", resume: token, at: 1)
        else {
            Issue.record("not resumed")
            return
        }
        #expect(id == 1 && replaced == 1 && room.devices.count == 1 && room.device(connection: 9)?.dealt == [62, 64])
        #expect(welcome.contains("\"name\":\"Sam\"") && welcome.contains("{\"note\":62,"))
        // A token from before a restart: refused, and not counted as a wrong code (30 pages
        // coming back to a new room would otherwise lock it).
        for k in 0..<40 {
            guard
                case .refused(let reply) = room.join(
                    connection: 20 + k, address: "10.0.0.\(k % 3)", code: "1234", name: "Old",
                    resume: "00000000deadbeef", at: 2)
            else {
                Issue.record("a stale token joined")
                return
            }
            #expect(reply.contains("\"why\":\"changed\""))
        }
        #expect(room.counters.wrongCodes == 0)
        guard case .joined = room.join(connection: 99, address: "10.0.0.1", code: room.code.digits, name: "New", at: 3)
        else {
            Issue.record("the room was locked by stale tokens")
            return
        }
    }

    @Test func oneAddressMayNotFillTheRoom() {
        let room = Classroom(bells: bells, code: code)
        for k in 0..<4 {
            guard case .joined = room.join(connection: k, address: "10.0.0.9", code: room.code.digits, name: "P", at: 0)
            else {
                Issue.record("device \(k) refused")
                return
            }
        }
        guard
            case .refused(let reply) = room.join(
                connection: 4, address: "10.0.0.9", code: room.code.digits, name: "P", at: 0)
        else {
            Issue.record("a fifth device from one address joined")
            return
        }
        #expect(reply.contains("\"why\":\"full\"") && room.counters.full == 1)
        // This machine itself (the teacher's) is not limited.
        guard
            case .joined = room.join(
                connection: 5, address: "10.0.0.9", code: room.code.digits, name: "P", trusted: true, at: 0)
        else {
            Issue.record("the trusted machine was limited")
            return
        }
    }

    @Test func theRoomIsCapped() {
        var limits = ClassroomLimits()
        limits.maximumDevices = 2
        let room = Classroom(bells: bells, code: code, limits: limits)
        for k in 1...2 { _ = room.join(connection: k, address: "a\(k)", code: room.code.digits, name: "P\(k)", at: 0) }
        guard
            case .refused(let reply) = room.join(
                connection: 3, address: "a3", code: room.code.digits, name: "P3", at: 0)
        else {
            Issue.record("a third device joined")
            return
        }
        #expect(reply.contains("\"why\":\"full\"") && room.counters.full == 1)
        room.leave(connection: 1)
        guard case .joined = room.join(connection: 3, address: "a3", code: room.code.digits, name: "P3", at: 0) else {
            Issue.record("no room after one left")
            return
        }
    }

    @Test func strikesPlayOnlyDealtBellsWithinTheLimit() {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 7, address: "a", code: room.code.digits, name: "Ada", at: 0)
        // Free play: every bell.
        #expect(room.perform(.strike(note: 65, velocity: 90), connection: 7, at: 0) == .on(note: 65, velocity: 90))
        #expect(room.perform(.strike(note: 59, velocity: 90), connection: 7, at: 0) == nil) // not a bell
        #expect(room.perform(.strike(note: 60, velocity: 90), connection: 8, at: 0) == nil) // not joined
        #expect(room.deal([62, 64, 62], to: 1))
        #expect(room.device(id: 1)?.dealt == [62, 64] && room.mode == .dealt)
        #expect(room.perform(.strike(note: 65, velocity: 90), connection: 7, at: 1) == nil)
        #expect(room.counters.notHeld == 2)
        #expect(room.perform(.damp(note: 64), connection: 7, at: 1) == .off(note: 64))
        #expect(room.perform(.release(note: 62), connection: 7, at: 1) == .off(note: 62))
        room.fixedVelocity = 100
        #expect(room.perform(.strike(note: 62, velocity: 3), connection: 7, at: 1) == .on(note: 62, velocity: 100))
        // Burst 20 (two taken already at t = 0 and 1 ns), then 10 a second.
        var played = 2
        for _ in 0..<40 where room.perform(.strike(note: 62, velocity: 50), connection: 7, at: 2) != nil { played += 1 }
        #expect(played == 20 && room.counters.rateLimited == 22)
        #expect(
            room.perform(.strike(note: 62, velocity: 50), connection: 7, at: 100_000_002)
                == .on(note: 62, velocity: 100))
        #expect(room.device(id: 1)?.strikes == 21 && room.device(id: 1)?.rateLimited == 22)
        #expect(room.deal([99], to: 1) == false && room.deal([60], to: 5) == false)
    }

    @Test func dealingRoundGivesEveryBellOnce() {
        for devices in [1, 3, 5, 13, 20] {
            let room = Classroom(bells: bells, code: code)
            for k in 0..<devices {
                _ = room.join(connection: k, address: "a\(k)", code: room.code.digits, name: "P\(k)", at: 0)
            }
            room.dealRound()
            let dealt = room.devices.flatMap(\.dealt)
            if devices <= 13 {
                #expect(dealt.sorted() == Array(60...72), "\(devices) devices")
                #expect(
                    room.devices.allSatisfy { $0.dealt.count == 13 / devices || $0.dealt.count == 13 / devices + 1 })
            } else {
                #expect(Set(dealt) == Set(60...72) && room.devices.allSatisfy { $0.dealt.count == 1 })
            }
        }
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 1, address: "a", code: room.code.digits, name: "A", at: 0)
        room.dealRound()
        room.freePlay()
        #expect(room.mode == .free && room.held(by: room.devices[0]) == Array(60...72))
    }

    @Test func theTeacherRemovesADevice() {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 4, address: "a", code: room.code.digits, name: "A", at: 0)
        #expect(room.remove(id: 1) == 4)
        #expect(room.remove(id: 1) == nil && room.devices.isEmpty && room.counters.removed == 1)
    }

    @Test func theTeachersViewIsJSONWithEveryCounter() throws {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 4, address: "10.1.2.3", code: room.code.digits, name: "Zoë \"Z\" </script>", at: 0)
        let json = room.teacherJSON(extra: [("joinURL", jsonQuoted("http://10.0.0.1:8080/"))])
        #expect(json.contains("\"name\":\"Zoë \\\"Z\\\" \\u003c/script>\""))
        #expect(json.contains("\"maximumDevices\":64,\"strikesPerSecond\":10.0,\"strikeBurst\":20.0"))
        #expect(
            json.contains(
                "\"counters\":{\"malformed\":0,\"wrongCodes\":0,\"lockedOut\":0,\"full\":0,\"rateLimited\":0,\"notHeld\":0,\"removed\":0}"
            ))
        #expect(json.hasSuffix(",\"joinURL\":\"http://10.0.0.1:8080/\"}"))
        #expect(jsonQuoted("a\u{01}\u{2028}\n") == "\"a\\u0001\\u2028\\n\"")
        #expect(Classroom.litJSON([60, 64]) == "{\"type\":\"lit\",\"notes\":[60,64]}")
    }
}

@Suite struct TeacherMessages {
    func read(_ text: String) -> TeacherMessage? { try? readTeacherMessage(Array(text.utf8)) }
    func refusal(_ text: String) -> String? {
        do {
            _ = try readTeacherMessage(Array(text.utf8))
            return nil
        } catch { return error.field }
    }

    @Test func eachMessageIsRead() {
        #expect(read(#"{"type":"deal","device":3,"notes":[60,62]}"#) == .deal(device: 3, notes: [60, 62]))
        #expect(read(#"{"type":"dealRound"}"#) == .dealRound)
        #expect(read(#"{"type":"free"}"#) == .free)
        #expect(read(#"{"type":"remove","device":9}"#) == .remove(device: 9))
        #expect(read(#"{"type":"volume","decibels":-6.5}"#) == .volume(decibels: -6.5))
        #expect(read(#"{"type":"dampAll"}"#) == .dampAll)
        #expect(read(#"{"type":"reverb","preset":"church"}"#) == .reverb(preset: "church"))
        #expect(read(#"{"type":"velocity","fixed":null}"#) == .velocity(fixed: nil))
        #expect(read(#"{"type":"velocity","fixed":100}"#) == .velocity(fixed: 100))
    }

    @Test func refusalsNameTheField() {
        #expect(refusal(#"{"type":"deal","device":3,"notes":[60,200]}"#) == "notes")
        #expect(refusal(#"{"type":"deal","device":0,"notes":[]}"#) == "device")
        #expect(refusal(#"{"type":"deal","device":1,"notes":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]}"#) == "notes")
        #expect(refusal(#"{"type":"volume","decibels":13}"#) == "decibels")
        #expect(refusal(#"{"type":"reverb","preset":"cave"}"#) == "preset")
        #expect(refusal(#"{"type":"velocity","fixed":0}"#) == "fixed")
        #expect(refusal(#"{"type":"free","extra":1}"#) == "extra")
        #expect(refusal(#"{"type":"shout"}"#) == "type")
        #expect(refusal(#"[1]"#) == "message")
        #expect(refusal("{\"type\":\"free\"" + String(repeating: " ", count: 1_100) + "}") == "message")
    }

    /// The opening (size, JSON, object, type, fields) is the pupil's reader's, each throwing its
    /// own error: the same words, the teacher's limit and types.
    @Test func theOpeningIsSharedWithThePupilsReader() {
        func teacher(_ text: String) -> TeacherMessageError? {
            do {
                _ = try readTeacherMessage(Array(text.utf8))
                return nil
            } catch { return error }
        }
        let types =
            "give \"type\": deal, dealRound, free, remove, volume, dampAll, reverb, velocity, follow or stopFollow"
        #expect(teacher(#"{"device":1}"#)?.description == "type: missing; " + types)
        #expect(teacher(#"{"type":7}"#)?.description == "type: a number, not a string; " + types)
        #expect(teacher(#"{"type":"a\u001bb"}"#)?.description == #"type: "a?b" is not a message; "# + types)
        #expect(
            teacher(#"{"type":"remove","device":1,"x":2}"#)?.description
                == "x: not a field of remove; send only type, device")
        #expect(teacher("[1]")?.description == "message: an array, not an object; send one JSON object")
        #expect(
            teacher("{") != nil && teacher("{")?.field == "message"
                && teacher("{")?.problem.hasPrefix("not JSON") == true)
        #expect(teacher(String(repeating: " ", count: 1_025))?.problem == "1025 bytes, more than 1024")
        // Nested one level deeper than a pupil's: a deal's notes.
        #expect(teacher(#"{"type":"deal","device":1,"notes":[60]}"#) == nil)
        // The pupil's reader says the same of its own.
        #expect(
            pupilRefusal(#"{"type":7}"#)
                == "type: a number, not a string; give \"type\": join, strike, release, damp or ping")
    }

    private func pupilRefusal(_ text: String) -> String? {
        do {
            _ = try readPupilMessage(Array(text.utf8))
            return nil
        } catch { return error.description }
    }
}

@Suite struct QRPictures {
    // A 3×3 "code": dark on the diagonal and at (2, 0).
    let dark: (Int, Int) -> Bool = { x, y in x >= 0 && y >= 0 && x < 3 && y < 3 && (x == y || (x == 2 && y == 0)) }

    @Test func theSVGDrawsRunsOfModulesInsideTheQuietZone() {
        let svg = qrSVG(width: 3, dark: dark)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 11 11\""))
        #expect(svg.contains("d=\"M4 4h1v1h-1zM6 4h1v1h-1zM5 5h1v1h-1zM6 6h1v1h-1z\""))
    }

    @Test func theTerminalDrawsTwoRowsACharacter() {
        let lines = qrTerminalLines(width: 3, quiet: 1, dark: dark)
        // 5×5 with the quiet zone: rows 0-1, 2-3, 4.
        #expect(lines.count == 3)
        let plain = lines.map {
            $0.replacingOccurrences(of: "\u{1B}[30;107m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        }
        #expect(plain == [" ▄ ▄ ", "  ▀▄ ", "     "])
    }
}

/// A generator that always gives the same numbers (the code is then known to the test).
private struct FixedGenerator: RandomNumberGenerator {
    var state: UInt64 = 42
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
