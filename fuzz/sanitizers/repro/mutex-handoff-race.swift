// Standalone reproduction (no Herald code) of the false ThreadSanitizer reports that
// ../mutex-handoff.c removes: Synchronization.Mutex handing a contended lock over through the
// kernel (FUTEX_LOCK_PI in the uninstrumented libswiftSynchronization.so), which TSan cannot see.
//
//   swiftc -sanitize=thread -g fuzz/sanitizers/repro/mutex-handoff-race.swift -o /tmp/mutex-handoff-race
//   clang -shared -fPIC -O2 fuzz/sanitizers/mutex-handoff.c -o /tmp/mutex-handoff.so -ldl
//   /tmp/mutex-handoff-race                                      # a few "data race" reports, exact total
//   LD_PRELOAD=/tmp/mutex-handoff.so /tmp/mutex-handoff-race     # no report
//   LD_PRELOAD=/tmp/mutex-handoff.so /tmp/mutex-handoff-race real # a true race beside the Mutex: still reported
//
// Swift 6.3.1-RELEASE, x86_64 Linux, 2 cores, five runs of each: 3-4 reports without the preload,
// 0 with it, and 2-3 in `real` mode with it.
import Foundation
import Synchronization

final class Box: Sendable {
    let state = Mutex<(count: Int, recent: [Int])>((0, []))
}

nonisolated(unsafe) var unguarded = 0
let box = Box()
let alsoRacing = CommandLine.arguments.dropFirst().first == "real"
let threads = (0..<4).map { _ in
    Thread {
        for i in 0..<20_000 {
            box.state.withLock { $0.count += 1; $0.recent.append(i); if $0.recent.count > 100 { $0.recent.removeAll() } }
            if alsoRacing { unguarded += 1 }
        }
    }
}
for thread in threads { thread.start() }
while box.state.withLock({ $0.count }) < 80_000 { usleep(1_000) }
print(box.state.withLock { $0.count })  // always 80000
