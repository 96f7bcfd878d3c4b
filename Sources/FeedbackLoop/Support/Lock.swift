#if TSAN
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#else
import Synchronization
#endif

/// A value and the lock that guards it, stored inside whatever holds it: no object of its own.
/// `~Copyable`, so it is only ever a `let` of its owner. The engine's lock is one (around a
/// loop's `LoopStateMachine`), where a lock object of its own was an allocation at every loop's
/// creation and 48 bytes of every idle loop; ``Lock`` is one behind a reference, for values that closures share.
///
/// Release builds use `Synchronization.Mutex` (the cheapest lock measured on Linux). Builds
/// compiled with `-Xswiftc -DTSAN` use a pthread mutex instead, because ThreadSanitizer reports
/// false races inside `Mutex` under contention while it understands pthread mutexes.
///
/// Nothing may be resumed, called back or awaited inside `withLock`: callers compute an action
/// under the lock and perform it after.
///
/// `package`-visible so that every target of this package that needs a lock (the services'
/// admission gate, for one) gets the same ThreadSanitizer-clean switch.
@usableFromInline
package struct InlineLock<Value>: ~Copyable, @unchecked Sendable {
    // @unchecked: the value is only touched inside `withLock`, which holds `mutex` (TSan build) or
    // is `Mutex`'s own critical region (release build).
    #if TSAN
    // A pthread mutex must not move, and `withLock` is `borrowing`: both live in memory of their own.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    @inlinable
    package init(_ value: sending Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        self.mutex = .allocate(capacity: 1)
        // Error-checking, so that taking the lock again on the thread that holds it (user code run
        // under the lock, re-entering the loop) traps with a message instead of deadlocking, as
        // `Mutex` does in the release build.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable
    package borrowing func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Lock: recursive lock on the thread that holds it (error \(locked)): user code ran under the lock")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
    #else
    @usableFromInline let mutex: Mutex<Value>

    @inlinable
    package init(_ value: sending Value) {
        self.mutex = Mutex(value)
    }

    @inlinable
    package borrowing func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try mutex.withLock(body)
    }
    #endif
}

/// An ``InlineLock`` behind a reference, for a value that closures and tasks share.
@usableFromInline
package final class Lock<Value>: Sendable {
    @usableFromInline let inline: InlineLock<Value>

    @inlinable
    package init(_ value: sending Value) {
        self.inline = InlineLock(value)
    }

    #if TSAN
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try inline.withLock(body)
    }
    #else
    @inlinable
    package func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try inline.withLock(body)
    }
    #endif
}
