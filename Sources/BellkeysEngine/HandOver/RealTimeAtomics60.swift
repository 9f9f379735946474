import Synchronization

// The same operations as RealTimeAtomics.swift, for Swift 6.0, which refuses Atomic in
// @_noLocks code: each calls the library's operation through a function kept out of line and
// out of that check. Only the Atomic operation itself is exempt (see RealTimeAtomics.swift).
#if compiler(<6.1)
@_noLocks @inlinable @inline(__always) public func releasingFence() { uncheckedReleasingFence() }
@_noLocks @inlinable @inline(__always) public func acquiringFence() { uncheckedAcquiringFence() }
@usableFromInline @inline(never) @_semantics("no_performance_analysis")
func uncheckedReleasingFence() { atomicMemoryFence(ordering: .releasing) }
@usableFromInline @inline(never) @_semantics("no_performance_analysis")
func uncheckedAcquiringFence() { atomicMemoryFence(ordering: .acquiring) }

extension Atomic where Value == Bool {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Bool { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> Bool { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Bool { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> Bool { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Bool) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: Bool) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Bool) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: Bool) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Bool) -> Bool { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: Bool) -> Bool { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Bool) -> Bool { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: Bool) -> Bool { exchange(value, ordering: .acquiring) }
}

extension Atomic where Value == Int {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Int { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> Int { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Int { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> Int { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Int) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: Int) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Int) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: Int) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Int) -> Int { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: Int) -> Int { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Int) -> Int { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: Int) -> Int { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: Int) -> (oldValue: Int, newValue: Int) { uncheckedRelaxedAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedAdd(_ operand: Int) -> (oldValue: Int, newValue: Int) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: Int) -> (oldValue: Int, newValue: Int) { uncheckedReleasingAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingAdd(_ operand: Int) -> (oldValue: Int, newValue: Int) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == Int32 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Int32 { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> Int32 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Int32 { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> Int32 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Int32) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: Int32) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Int32) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: Int32) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Int32) -> Int32 { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: Int32) -> Int32 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Int32) -> Int32 { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: Int32) -> Int32 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: Int32) -> (oldValue: Int32, newValue: Int32) { uncheckedRelaxedAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedAdd(_ operand: Int32) -> (oldValue: Int32, newValue: Int32) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: Int32) -> (oldValue: Int32, newValue: Int32) { uncheckedReleasingAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingAdd(_ operand: Int32) -> (oldValue: Int32, newValue: Int32) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == Int64 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Int64 { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> Int64 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Int64 { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> Int64 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Int64) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: Int64) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Int64) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: Int64) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Int64) -> Int64 { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: Int64) -> Int64 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Int64) -> Int64 { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: Int64) -> Int64 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: Int64) -> (oldValue: Int64, newValue: Int64) { uncheckedRelaxedAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedAdd(_ operand: Int64) -> (oldValue: Int64, newValue: Int64) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: Int64) -> (oldValue: Int64, newValue: Int64) { uncheckedReleasingAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingAdd(_ operand: Int64) -> (oldValue: Int64, newValue: Int64) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == UInt {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> UInt { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> UInt { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> UInt { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> UInt { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: UInt) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: UInt) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: UInt) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: UInt) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: UInt) -> UInt { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: UInt) -> UInt { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: UInt) -> UInt { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: UInt) -> UInt { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: UInt) -> (oldValue: UInt, newValue: UInt) { uncheckedRelaxedAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedAdd(_ operand: UInt) -> (oldValue: UInt, newValue: UInt) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: UInt) -> (oldValue: UInt, newValue: UInt) { uncheckedReleasingAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingAdd(_ operand: UInt) -> (oldValue: UInt, newValue: UInt) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == UInt32 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> UInt32 { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> UInt32 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> UInt32 { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> UInt32 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: UInt32) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: UInt32) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: UInt32) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: UInt32) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: UInt32) -> UInt32 { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: UInt32) -> UInt32 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: UInt32) -> UInt32 { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: UInt32) -> UInt32 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: UInt32) -> (oldValue: UInt32, newValue: UInt32) { uncheckedRelaxedAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedAdd(_ operand: UInt32) -> (oldValue: UInt32, newValue: UInt32) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: UInt32) -> (oldValue: UInt32, newValue: UInt32) {
        uncheckedReleasingAdd(operand)
    }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingAdd(_ operand: UInt32) -> (oldValue: UInt32, newValue: UInt32) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == UInt64 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> UInt64 { uncheckedRelaxedLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedLoad() -> UInt64 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> UInt64 { uncheckedAcquiringLoad() }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringLoad() -> UInt64 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: UInt64) { uncheckedRelaxedStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedStore(_ value: UInt64) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: UInt64) { uncheckedReleasingStore(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingStore(_ value: UInt64) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: UInt64) -> UInt64 { uncheckedRelaxedExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedExchange(_ value: UInt64) -> UInt64 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: UInt64) -> UInt64 { uncheckedAcquiringExchange(value) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedAcquiringExchange(_ value: UInt64) -> UInt64 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: UInt64) -> (oldValue: UInt64, newValue: UInt64) { uncheckedRelaxedAdd(operand) }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedRelaxedAdd(_ operand: UInt64) -> (oldValue: UInt64, newValue: UInt64) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: UInt64) -> (oldValue: UInt64, newValue: UInt64) {
        uncheckedReleasingAdd(operand)
    }
    @usableFromInline @inline(never) @_semantics("no_performance_analysis")
    func uncheckedReleasingAdd(_ operand: UInt64) -> (oldValue: UInt64, newValue: UInt64) {
        wrappingAdd(operand, ordering: .releasing)
    }
}
#endif
