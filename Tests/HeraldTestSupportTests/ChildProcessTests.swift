import Foundation
import HeraldTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `ChildProcess`, which every test that starts a program relies on: how a child ended, where
/// its input and output go, and that a pipe ends when its child does, however many other
/// children are started meanwhile.
@Suite("Child processes started with posix_spawn")
struct ChildProcessTests {
    @Test func exitCodeAndSignalAreDecoded() async throws {
        try await onThread {
            let failing = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "exit 3"])
            let failed = try failing.waitForExit()
            #expect(failed.exitCode == 3 && failed.signal == nil && !failed.succeeded, "\(failed)")
            #expect(try failing.waitForExit() == failed, "a second wait returns the same")
            #expect(!failing.signal(SIGTERM), "a reaped child's pid is not signalled")

            let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["60"])
            #expect(sleeper.signal(SIGTERM))
            let terminated = try sleeper.waitForExit()
            #expect(terminated.signal == SIGTERM && terminated.exitCode == nil, "\(terminated)")

            #expect(try ChildProcess(executable: "/bin/true").waitForExit().succeeded)
        }
    }

    @Test func combinedOutputEnvironmentAndWorkingDirectory() async throws {
        let folder = try TemporaryDirectory()
        let output = try await onThread { () throws -> String in
            let child = try ChildProcess(
                executable: "/bin/sh",
                arguments: ["-c", #"echo "$GREETING"; echo "${HOME-no home}"; echo to-stderr >&2; echo here > made-here"#],
                environment: ["GREETING": "hello world"], workingDirectory: folder.path,
                standardOutput: .pipe, standardError: .standardOutput)
            let output = child.standardOutput?.readDataToEndOfFile() ?? Data()
            #expect(try child.waitForExit().succeeded)
            return String(decoding: output, as: UTF8.self)
        }
        #expect(output == "hello world\nno home\nto-stderr\n", "only the given environment, both streams in order")
        #expect(FileManager.default.fileExists(atPath: folder.file("made-here")), "ran in the working directory")
    }

    @Test func childInheritsNoDescriptorAboveStandardError() async throws {
        // Not close-on-exec, as ThreadSanitizer's symbolizer pipes are not. The shell lists its
        // own descriptors with a glob, which holds none open while it prints.
        let leaky = open("/dev/null", O_RDONLY)
        #expect(leaky > 2)
        defer { _ = close(leaky) }
        let listed = try await onThread { () throws -> String in
            let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", #"for f in /proc/$$/fd/*; do echo "${f##*/}"; done"#], standardOutput: .pipe)
            let output = child.standardOutput?.readDataToEndOfFile() ?? Data()
            #expect(try child.waitForExit().succeeded)
            return String(decoding: output, as: UTF8.self)
        }
        let descriptors = Set(listed.split(separator: "\n").compactMap { Int32($0) })
        #expect(!descriptors.contains(leaky), "the child inherited descriptor \(leaky): \(descriptors.sorted())")
        #expect(descriptors.isSuperset(of: [0, 1, 2]))
    }

    @Test func outputGoesToFileOrNowhere() async throws {
        let folder = try TemporaryDirectory()
        try await onThread {
            let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; read line || echo stdin-empty"],
                                         standardOutput: .file(folder.file("out.txt")), standardError: .discarded)
            #expect(try child.waitForExit().succeeded)
        }
        #expect(try String(contentsOfFile: folder.file("out.txt"), encoding: .utf8) == "out\nstdin-empty\n")
    }

    @Test func failureToStartThrows() async throws {
        try await onThread {
            #expect(throws: ChildProcessError.self) { try ChildProcess(executable: "/nonexistent/program") }
            #expect(throws: ChildProcessError.self) { try ChildProcess(executable: "/bin/true", workingDirectory: "/nonexistent") }
            #expect(throws: ChildProcessError.self) {
                try ChildProcess(executable: "/bin/true", standardOutput: .standardOutput)
            }
        }
    }

    /// Half the threads start long-lived children while the others read a short child's pipe to
    /// its end: a long-lived child that inherited the write end of someone else's pipe (as a
    /// PostgreSQL server started by another test would) holds that reader until it dies.
    @Test func pipeEndsWithItsChildWhileOthersAreStarted() async throws {
        let sleepers = Sleepers()
        let readTimes = try await withThrowingTaskGroup(of: TimeInterval?.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await onThread { () throws -> TimeInterval? in
                        if index.isMultiple(of: 2) {
                            sleepers.add(try ChildProcess(executable: "/bin/sleep", arguments: ["60"]))
                            return nil
                        }
                        let echo = try ChildProcess(executable: "/bin/echo", arguments: ["child \(index)"],
                                                    standardOutput: .pipe, standardError: .pipe)
                        let start = Date()
                        let output = echo.standardOutput?.readDataToEndOfFile() ?? Data()
                        _ = echo.standardError?.readDataToEndOfFile()
                        let elapsed = Date().timeIntervalSince(start)
                        #expect(String(decoding: output, as: UTF8.self) == "child \(index)\n")
                        #expect(try echo.waitForExit().succeeded)
                        return elapsed
                    }
                }
            }
            return try await group.reduce(into: [TimeInterval]()) { if let time = $1 { $0.append(time) } }
        }
        try await onThread { try sleepers.killAll() }
        #expect(readTimes.count == 20)
        #expect(readTimes.allSatisfy { $0 < 30 }, "a reader waited for another test's child: \(readTimes.max() ?? 0) s")
    }
}

/// The long-lived children of one test, killed and reaped at its end.
private final class Sleepers: Sendable {
    private let children = Mutex<[ChildProcess]>([])

    func add(_ child: ChildProcess) { children.withLock { $0.append(child) } }

    func killAll() throws {
        for child in children.withLock({ $0 }) {
            child.signal(SIGKILL)
            #expect(try child.waitForExit().signal == SIGKILL)
        }
    }
}

/// Runs blocking work (waitpid, reading a pipe) on a thread of its own, off the cooperative pool.
private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
