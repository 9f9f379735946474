// Who gets a place among the server's connections. Pure Swift, no I/O: the server asks, with
// what each of its connections is doing, and does what the answer says.

/// What a connection is doing, as far as its place is concerned.
public enum SlotUse: Equatable, Sendable {
    /// A request whose head has not all arrived: a page loading, or a client too slow to count.
    case request
    /// A pupil's WebSocket that has not joined the classroom (yet).
    case unjoined
    /// A joined device's WebSocket: never made to give way.
    case joined
    /// The teacher's page: never made to give way.
    case teacher
    /// Answered or told to close, and leaving by itself (within 2 s).
    case closing
}

/// What to do with a new connection.
public enum SlotAdmission: Equatable, Sendable {
    /// Take it: there is room.
    case admit
    /// Take it, and close the connection at this index (it gives way) to make room.
    case admitInPlaceOf(index: Int)
    /// Its address already holds `ConnectionSlots.perAddress` connections: close it at once.
    case refuseAddress
    /// Every place is held by a connection that does not give way: close it at once.
    case refuseFull
}

/// The server's places for connections: at most `maximum` at once and `perAddress` from one
/// address (an address `trusted` to be this machine's own excepted). When every place is taken,
/// an unfinished request gives way to the new connection, else a WebSocket that has not joined,
/// the oldest first; joined devices, the teacher's pages and connections already closing keep
/// theirs, so the places a flood can take are only those no one has a use for yet.
/// Thread: server.
public struct ConnectionSlots: Sendable {
    public var maximum: Int
    public var perAddress: Int

    public init(maximum: Int, perAddress: Int) {
        self.maximum = maximum
        self.perAddress = perAddress
    }

    /// The answer for a connection from `peer`, given the connections held now, oldest first.
    public func admit<Held: RandomAccessCollection>(peer: String, trusted: Bool, among held: Held) -> SlotAdmission
    where Held.Element == (peer: String, use: SlotUse), Held.Index == Int {
        if !trusted, held.count(where: { $0.peer == peer }) >= perAddress { return .refuseAddress }
        guard held.count >= maximum else { return .admit }
        if let k = held.firstIndex(where: { $0.use == .request }) ?? held.firstIndex(where: { $0.use == .unjoined }) {
            return .admitInPlaceOf(index: k)
        }
        return .refuseFull
    }
}
