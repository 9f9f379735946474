import BellkeysClassroom
import BellkeysEngine
import BellkeysFormats
import BellkeysIO
import BellkeysLive
import Glibc

// `--web`: the classroom's server, its room and the startup report (the join address, the QR
// code, the room code, the teacher's page). Thread: control.
extension LiveSession {
    /// Starts the classroom for `loaded`'s bells, or throws a `Failure` that says why not (a
    /// taken port, an address not this machine's).
    static func startClassroom(
        _ options: ClassroomOptions, loaded: LoadedInstrument, channel: UInt8,
        console: Console
    ) throws -> (input: WebInput, server: WebServer) {
        // The bells of each set (a map of one instrument is one set), and the follow-along's
        // tunes on each set's bells: the demo, then --web-tune's files, read before anything starts.
        let classroomSets =
            loaded.sets.isEmpty
            ? [ClassroomSet(name: nil, bells: ClassroomBell.bells(of: loaded.instrument))]
            : loaded.sets.map { ClassroomSet(name: $0.name, bells: ClassroomBell.bells(of: $0.instrument)) }
        let starting = loaded.sets.isEmpty ? 0 : loaded.instrumentSets.startingSets[Int(channel)]
        var files = [(name: "the Westminster Quarters (demo)", file: westminsterQuarters())]
        for path in options.webTunes {
            do {
                let file = try parseMIDIFile(try readFile(path, what: "MIDI file"), file: path)
                files.append((String(path.split(separator: "/").last ?? Substring(path)), file))
            } catch {
                throw Failure("--web-tune: \(error)")
            }
        }
        let sets = classroomSets.map { set in
            (set: set, tunes: files.map { FollowTune(name: $0.name, file: $0.file, bells: set.bells.map(\.note)) })
        }
        for (path, tune) in zip(options.webTunes, sets[starting].tunes.dropFirst()) where tune.cues.isEmpty {
            throw Failure(
                "--web-tune \(path): no note of it falls on a bell\n    fix: give a MIDI file with notes (any octave is moved onto the bells)"
            )
        }
        var limits = ClassroomLimits()
        limits.maximumDevices = options.webDevices
        let classroom = Classroom(
            bells: classroomSets[starting].bells, setName: classroomSets[starting].name, limits: limits)
        let addresses = localIPv4Addresses()
        // The QR code carries the address given, else the first that is not loopback.
        let joinAddress =
            options.webAddress ?? addresses.first { !$0.address.hasPrefix("127.") }?.address ?? "127.0.0.1"
        var settings = WebServer.Settings()
        settings.listenAddress = options.webAddress ?? "0.0.0.0"
        settings.port = options.webPort
        settings.maximumConnections = options.webDevices + 32
        let link: ClassroomLink
        let server: WebServer
        let qr: QRCode
        do {
            link = try ClassroomLink()
            server = try WebServer(settings: settings, classroom: classroom, link: link)
            // The port is known now (0 takes a free one), and with it the join address.
            server.joinURL = "http://\(joinAddress):\(server.port)/"
            server.sets = sets
            server.classroomSet = starting
            link.setIndex.store(starting, ordering: .relaxed)
            qr = try QRCode(server.joinURL)
            server.pages = WebServer.Pages(
                pupil: Array(pupilPageHTML.utf8), teacher: Array(teacherPageHTML.utf8),
                qrSVG: Array(qrSVG(width: qr.width, dark: qr.dark).utf8), notTeacher: Array(notTeacherPageHTML.utf8))
        } catch {
            let fix =
                error.code == EADDRINUSE
                ? "another program has port \(settings.port); choose another with --web-port"
                : error.code == EADDRNOTAVAIL
                    ? "\(settings.listenAddress) is not an address of this machine; `ip -4 addr` lists them"
                    : error.code == EACCES
                        ? "ports under 1024 need root; use --web-port 8080" : "check --web-address and --web-port"
            throw Failure("cannot serve the classroom: \(error)\n    fix: \(fix)")
        }
        server.start()
        let url = server.joinURL, port = server.port
        console.line(
            "  classroom: join at \(url) with room code \(classroom.code) (up to \(options.webDevices) devices)")
        if console.live {
            for line in qrTerminalLines(width: qr.width, dark: qr.dark) { console.line("    " + line) }
        }
        // Other addresses pupils might reach (loopback is this computer only).
        let others = addresses.map(\.address).filter {
            $0 != joinAddress && !$0.hasPrefix("127.") && options.webAddress == nil
        }
        if !others.isEmpty {
            console.line(
                "    the QR code carries \(joinAddress); pupils on another network use "
                    + others.map { "http://\($0):\(port)/" }.joined(separator: ", ") + " (--web-address picks one)")
        }
        console.line(
            "    teacher: http://\(joinAddress):\(port)/teacher on this computer, or from another one "
                + "http://\(joinAddress):\(port)/teacher?key=\(settings.teacherKey)")
        let input = WebInput(
            link: link, classroom: classroom, channel: channel, joinURL: server.joinURL,
            joined: { server.joinedNow.load(ordering: .relaxed) })
        return (input, server)
    }
}
