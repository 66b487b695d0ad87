// Preloaded (LD_PRELOAD) into the ThreadSanitizer stage of `make test-sanitizers` only
// (scripts/test-sanitizers.sh builds it with the toolchain's clang).
//
// Why: Synchronization.Mutex locks and unlocks through an atomic compare-exchange on its
// handle, inlined into Herald's (instrumented) code, so TSan sees those. Under contention both
// sides leave that fast path for `_MutexHandle._lockSlow` / `_unlockSlow` in the uninstrumented
// libswiftSynchronization.so, where the kernel hands the lock over (FUTEX_LOCK_PI /
// FUTEX_UNLOCK_PI) and the new owner performs no atomic operation TSan can see. Two critical
// sections that met under contention then have no happens-before edge for TSan, and every
// Mutex-owning type eventually shows a false "data race" on the state its Mutex guards
// (repro/mutex-handoff-race.swift).
//
// This wraps exactly those two slow paths and tells TSan what the kernel did: the unlocker
// releases the handle's address before handing over, the new owner acquires it afterwards (the
// same sync object the inlined fast path's atomics use). Nothing else is hidden: an access
// outside a critical section is still reported (the repro's `real` mode).
//
// The wrappers use Swift's calling convention: `self` of a method (the handle's address,
// borrowed) travels in the swiftself register, which clang spells `swift_context`. The TSan
// entry points are weak, so a process without TSan (PostgreSQL, Python, … started by a test)
// that inherits LD_PRELOAD only passes the calls through.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"
#define SWIFT_SELF __attribute__((swift_context))

typedef __attribute__((swiftcall)) void (*lock_slow_function)(uint32_t, void *SWIFT_SELF);
typedef __attribute__((swiftcall)) void (*unlock_slow_function)(void *SWIFT_SELF);

__attribute__((swiftcall)) void herald_lock_slow(uint32_t thread_id, void *SWIFT_SELF handle) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void herald_unlock_slow(void *SWIFT_SELF handle) __asm__(UNLOCK_SLOW);

__attribute__((swiftcall)) void herald_lock_slow(uint32_t thread_id, void *SWIFT_SELF handle) {
    static lock_slow_function original;
    if (!original) original = (lock_slow_function)dlsym(RTLD_NEXT, LOCK_SLOW);
    original(thread_id, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

__attribute__((swiftcall)) void herald_unlock_slow(void *SWIFT_SELF handle) {
    static unlock_slow_function original;
    if (!original) original = (unlock_slow_function)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    original(handle);
}
