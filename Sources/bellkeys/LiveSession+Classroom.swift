import BellkeysClassroom
import BellkeysClassroomServer
import BellkeysEngine
import BellkeysFormats
import BellkeysLive
import BellkeysLoading
import BellkeysSystem
import Glibc

// `--web`: the classroom's server, its room and the startup report (the join address, the QR
// code, the room code, the teacher's page). Thread: control.
extension LiveSession {
    /// The follow-along's tunes: the demo, then `--web-tune`'s files.
    typealias Tunes = [(name: String, file: MIDIFile)]

    /// The classroom's sets: each set's bells (a map of one instrument is one set, without a
    /// name), and `tunes` on them.
    static func classroomSets(_ loaded: LoadedInstrument, tunes: Tunes) -> ClassroomLink.Sets {
        let sets =
            loaded.sets.isEmpty
            ? [ClassroomSet(name: nil, bells: ClassroomBell.bells(of: loaded.instrument))]
            : loaded.sets.map { ClassroomSet(name: $0.name, bells: ClassroomBell.bells(of: $0.instrument)) }
        return sets.map { set in
            (set: set, tunes: tunes.map { FollowTune(name: $0.name, file: $0.file, bells: set.bells.map(\.note)) })
        }
    }

    /// Every note of `sets`, for the lights.
    static func allNotes(_ sets: ClassroomLink.Sets) -> [Int] {
        Set(sets.flatMap { $0.set.bells.map(\.note) }).sorted()
    }

    /// Starts the classroom for `loaded`'s bells, or throws a `Failure` that says why not (a
    /// taken port, an address not this machine's, a tune with no note on any set's bells).
    static func startClassroom(
        _ options: ClassroomOptions, loaded: LoadedInstrument, channel: UInt8,
        console: Console
    ) throws -> (input: WebInput, server: WebServer, tunes: Tunes) {
        // The tunes are read before anything starts.
        var files = [(name: "the Westminster Quarters (demo)", file: westminsterQuarters())]
        for path in options.webTunes {
            do {
                let file = try parseMIDIFile(try readFile(path, what: "MIDI file"), file: path)
                files.append((String(path.split(separator: "/").last ?? Substring(path)), file))
            } catch {
                throw Failure("--web-tune: \(error)")
            }
        }
        let sets = classroomSets(loaded, tunes: files)
        let starting = loaded.sets.isEmpty ? 0 : loaded.instrumentSets.startingSets[Int(channel)]
        for (k, path) in options.webTunes.enumerated() where sets.allSatisfy({ $0.tunes[k + 1].cues.isEmpty }) {
            throw Failure(
                "--web-tune \(path): no note of it falls on a bell\n    fix: give a MIDI file with notes (any octave is moved onto the bells)"
            )
        }
        var limits = ClassroomLimits()
        limits.maximumDevices = options.webDevices
        let classroom = Classroom(bells: sets[starting].set.bells, setName: sets[starting].set.name, limits: limits)
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
            link: link, classroom: classroom, channel: channel, notes: allNotes(sets), joinURL: server.joinURL,
            joined: { server.joinedNow.load(ordering: .relaxed) })
        return (input, server, files)
    }

    /// After a reload: the classroom's sets as the map has them now, handed to the server (which
    /// deals the class's bells from them once the engine reports the set of this generation), and
    /// the lights for all their notes.
    func reloadClassroom() {
        guard let web else { return }
        let sets = Self.classroomSets(loaded, tunes: classroomTunes)
        web.setsGeneration += 1
        web.link.handOver(sets, generation: web.setsGeneration)
        web.notes = Self.allNotes(sets)
    }

    /// The closing line's classroom counters, or nothing without `--web`.
    func classroomCounts(devicesAtEnd: Int) -> String {
        guard let web, let s = classroomServer else { return "" }
        let c = web.classroom.counters
        return "; classroom: strikes \(web.strikes), devices \(devicesAtEnd) at the end"
            + ", over the strike limit \(c.rateLimited), wrong codes \(c.wrongCodes), closed malformed \(s.malformedClosed.load(ordering: .relaxed))"
            + ", closed flooding \(s.floodClosed.load(ordering: .relaxed)), connections refused \(s.connectionsRefused.load(ordering: .relaxed))"
            + ", lost on the way \(web.link.droppedToControl.load(ordering: .relaxed))"
            + ", closed to make room \(s.connectionsGaveWay.load(ordering: .relaxed))"
    }
}
