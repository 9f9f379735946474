import Synchronization

// The Atomic operations the real-time path uses, each by name (the operation and its ordering),
// for two compilers. Each is @_noLocks, so that callers in other files (a debug build compiles
// files apart) may call it.
// - Swift 6.1 and later (the main toolchain, 6.3.1) check Atomic in @_noLocks code and pass it:
//   each of these is the library's operation itself, inlined and checked with the rest.
// - Swift 6.0 (Debian 13's swiftlang 6.0.3) refuses every Atomic operation in a @_noLocks
//   function ("this code pattern can cause locking"), though Atomic never locks. There each
//   calls the library's operation through a function kept out of line and out of that check
//   (@_semantics("no_performance_analysis"), the attribute of the library's own
//   _unsafePerformance); everything else in a @_noLocks function is still checked, so an
//   allocation, a lock, a reference count or a call out of reach is refused by 6.0 as by 6.3.1
//   (Tests/RealTime/plant plants each and sees it refused by both; docs/testing.md).
#if compiler(>=6.1)
/// A release fence, and an acquire fence.
@_noLocks @inlinable @inline(__always) public func releasingFence() { atomicMemoryFence(ordering: .releasing) }
@_noLocks @inlinable @inline(__always) public func acquiringFence() { atomicMemoryFence(ordering: .acquiring) }

extension Atomic where Value == Bool {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Bool { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Bool { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Bool) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Bool) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Bool) -> Bool { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Bool) -> Bool { exchange(value, ordering: .acquiring) }
}

extension Atomic where Value == Int {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Int { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Int { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Int) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Int) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Int) -> Int { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Int) -> Int { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: Int) -> (oldValue: Int, newValue: Int) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: Int) -> (oldValue: Int, newValue: Int) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == Int32 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Int32 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Int32 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Int32) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Int32) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Int32) -> Int32 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Int32) -> Int32 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: Int32) -> (oldValue: Int32, newValue: Int32) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: Int32) -> (oldValue: Int32, newValue: Int32) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == Int64 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> Int64 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> Int64 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: Int64) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: Int64) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: Int64) -> Int64 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: Int64) -> Int64 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: Int64) -> (oldValue: Int64, newValue: Int64) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: Int64) -> (oldValue: Int64, newValue: Int64) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == UInt {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> UInt { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> UInt { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: UInt) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: UInt) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: UInt) -> UInt { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: UInt) -> UInt { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: UInt) -> (oldValue: UInt, newValue: UInt) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: UInt) -> (oldValue: UInt, newValue: UInt) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == UInt32 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> UInt32 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> UInt32 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: UInt32) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: UInt32) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: UInt32) -> UInt32 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: UInt32) -> UInt32 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: UInt32) -> (oldValue: UInt32, newValue: UInt32) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: UInt32) -> (oldValue: UInt32, newValue: UInt32) {
        wrappingAdd(operand, ordering: .releasing)
    }
}

extension Atomic where Value == UInt64 {
    @_noLocks @inlinable @inline(__always)
    public func relaxedLoad() -> UInt64 { load(ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func acquiringLoad() -> UInt64 { load(ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always)
    public func relaxedStore(_ value: UInt64) { store(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always)
    public func releasingStore(_ value: UInt64) { store(value, ordering: .releasing) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedExchange(_ value: UInt64) -> UInt64 { exchange(value, ordering: .relaxed) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func acquiringExchange(_ value: UInt64) -> UInt64 { exchange(value, ordering: .acquiring) }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func relaxedAdd(_ operand: UInt64) -> (oldValue: UInt64, newValue: UInt64) {
        wrappingAdd(operand, ordering: .relaxed)
    }
    @_noLocks @inlinable @inline(__always) @discardableResult
    public func releasingAdd(_ operand: UInt64) -> (oldValue: UInt64, newValue: UInt64) {
        wrappingAdd(operand, ordering: .releasing)
    }
}
#endif
