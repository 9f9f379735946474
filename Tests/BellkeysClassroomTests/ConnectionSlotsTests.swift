import BellkeysClassroom
import Testing

@Suite struct ConnectionPlaces {
    let slots = ConnectionSlots(maximum: 6, perAddress: 3)

    func held(_ list: [(String, SlotUse)]) -> [(peer: String, use: SlotUse)] { list.map { (peer: $0.0, use: $0.1) } }

    @Test func withRoomEveryAddressUnderItsLimitIsTaken() {
        let now = held([("10.0.0.2", .request), ("10.0.0.2", .joined), ("10.0.0.3", .teacher)])
        #expect(slots.admit(peer: "10.0.0.2", trusted: false, among: now) == .admit)
        #expect(slots.admit(peer: "10.0.0.9", trusted: false, among: now) == .admit)
        #expect(slots.admit(peer: "10.0.0.9", trusted: false, among: held([])) == .admit)
    }

    /// An address at its limit is refused, full or not, whatever its connections are doing;
    /// this machine's own address is not held to it.
    @Test func anAddressAtItsLimitIsRefused() {
        let three = held([("10.0.0.2", .joined), ("10.0.0.2", .closing), ("10.0.0.2", .request)])
        #expect(slots.admit(peer: "10.0.0.2", trusted: false, among: three) == .refuseAddress)
        #expect(slots.admit(peer: "10.0.0.2", trusted: true, among: three) == .admit)
        let full = held(
            Array(repeating: ("10.0.0.2", SlotUse.request), count: 3) + [
                ("10.0.0.3", .request), ("10.0.0.4", .request), ("10.0.0.5", .request),
            ])
        #expect(slots.admit(peer: "10.0.0.2", trusted: false, among: full) == .refuseAddress)
    }

    /// Full: the oldest unfinished request gives way, else the oldest socket not joined; joined
    /// devices, the teacher and connections closing keep their places.
    @Test func whenFullTheOldestUnfinishedGivesWay() {
        let mixed = held([
            ("10.0.0.2", .joined), ("10.0.0.3", .unjoined), ("10.0.0.4", .teacher), ("10.0.0.5", .request),
            ("10.0.0.6", .closing), ("10.0.0.7", .request),
        ])
        #expect(slots.admit(peer: "10.0.0.8", trusted: false, among: mixed) == .admitInPlaceOf(index: 3))
        let noRequest = held([
            ("10.0.0.2", .joined), ("10.0.0.3", .teacher), ("10.0.0.4", .unjoined), ("10.0.0.5", .closing),
            ("10.0.0.6", .unjoined), ("10.0.0.7", .joined),
        ])
        #expect(slots.admit(peer: "10.0.0.8", trusted: false, among: noRequest) == .admitInPlaceOf(index: 2))
        let settled = held([
            ("10.0.0.2", .joined), ("10.0.0.3", .teacher), ("10.0.0.4", .joined), ("10.0.0.5", .closing),
            ("10.0.0.6", .joined), ("10.0.0.7", .joined),
        ])
        #expect(slots.admit(peer: "10.0.0.8", trusted: false, among: settled) == .refuseFull)
        #expect(slots.admit(peer: "127.0.0.1", trusted: true, among: settled) == .refuseFull)
    }

    /// The flood of the web tests, in small: slow requests from many addresses hold every place
    /// but a joined device's; each new connection (the flood's again, or a pupil's) takes the
    /// oldest request's place, so the newest, the pupil's, is the last to go.
    @Test func aFloodOfRequestsCyclesAndTheNewestStays() {
        var now = held([("10.0.0.1", .joined)] + (2...6).map { ("10.0.1.\($0)", SlotUse.request) })
        let pupil = "10.0.9.9"
        func arrive(_ peer: String) {
            guard case .admitInPlaceOf(let k) = slots.admit(peer: peer, trusted: false, among: now) else {
                Issue.record("\(peer) not admitted")
                return
            }
            #expect(now[k].use == .request)
            now.remove(at: k)
            now.append((peer: peer, use: .request))
        }
        arrive(pupil)
        for k in 2...5 { arrive("10.0.2.\(k)") }
        #expect(now.map(\.peer) == ["10.0.0.1", pupil, "10.0.2.2", "10.0.2.3", "10.0.2.4", "10.0.2.5"])
        // Its request read, the pupil's socket has not joined yet: requests still go first.
        now[1].use = .unjoined
        for k in 6...20 { arrive("10.0.3.\(k)") }
        #expect(now[0].peer == "10.0.0.1" && now[1].peer == pupil && now.count == 6)
    }
}
