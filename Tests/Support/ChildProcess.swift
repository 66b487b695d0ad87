import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn: an executable, its arguments and an explicit
/// environment, standard input from /dev/null, each output discarded, piped or written to a file.
///
/// Not Foundation's `Process`: on Linux its `run()` crashed the whole test process (SIGSEGV in a
/// memcpy) while other tests started processes at the same moment, even with launches
/// serialised among its own callers; a crash ends the CI run. posix_spawn needs no lock.
///
/// Every descriptor the parent creates is close-on-exec from birth (pipe2), so a child spawned
/// concurrently by another test (a PostgreSQL server outlives its `pg_ctl`) never inherits the
/// write end of a pipe, whose reader would then never see end of file; and the child closes
/// every descriptor above 2 before exec, so it inherits none the rest of the process opened.
///
/// `waitForExit()` blocks: call it from a thread of its own, not from the cooperative pool.
public final class ChildProcess: Sendable {
    /// Where one of the child's output streams goes.
    public enum Output: Sendable {
        /// /dev/null.
        case discarded
        /// A pipe; the parent reads it through `standardOutput` or `standardError`.
        case pipe
        /// A file, created or truncated.
        case file(String)
        /// Wherever standard output goes (for standard error only: combined output).
        case standardOutput
    }

    /// How the child ended: the raw `waitpid` status, decoded.
    public struct Termination: Sendable, Equatable, CustomStringConvertible {
        /// The status word `waitpid` reported.
        public let status: Int32

        /// The exit code when the child exited (WIFEXITED/WEXITSTATUS are macros Swift cannot
        /// import: exited when the low 7 bits are 0, the code in the next 8).
        public var exitCode: Int32? { status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }

        /// The signal that killed the child (WIFSIGNALED/WTERMSIG: low 7 bits, neither 0 nor
        /// 0x7F, which marks a stopped child).
        public var signal: Int32? {
            let low = status & 0x7F
            return low != 0 && low != 0x7F ? low : nil
        }

        /// Exited with code 0.
        public var succeeded: Bool { exitCode == 0 }

        public var description: String {
            if let exitCode { return "exit code \(exitCode)" }
            if let signal { return "signal \(signal)" }
            return "status \(status)"
        }
    }

    /// The environment this test process started with, read once (nothing in the tests changes
    /// it, and reading `environ` while another thread sets a variable would race).
    public static let inheritedEnvironment: [String: String] = ProcessInfo.processInfo.environment

    /// The child's process id.
    public let pid: pid_t
    /// The read end of the child's standard output, when it goes to `.pipe`.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error, when it goes to `.pipe`.
    public let standardError: FileHandle?
    /// Set once the child is reaped: its pid may then belong to another process, so it is
    /// neither signalled nor waited for again.
    private let termination = Mutex<Termination?>(nil)

    /// Starts `executable` (an absolute path; no PATH search) with `arguments`.
    public init(executable: String, arguments: [String] = [],
                environment: [String: String] = ChildProcess.inheritedEnvironment,
                workingDirectory: String? = nil,
                standardOutput: Output = .discarded, standardError: Output = .discarded) throws(ChildProcessError) {
        if case .standardOutput = standardOutput {
            throw ChildProcessError("standard output cannot go to standard output")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Both ends are close-on-exec: the child gets its end through dup2 (which clears the
        // flag on the copy), and no other child ever gets either.
        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }
        func route(_ output: Output, to target: Int32) throws(ChildProcessError) -> Int32? {
            switch output {
            case .discarded:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard GNUExtensions.pipe2(&ends, O_CLOEXEC) == 0 else {
                    throw ChildProcessError("cannot create a pipe: errno \(errno)")
                }
                parentEnds.append(ends[0])
                childEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                return ends[0]
            }
            return nil
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let outputReader: Int32?
        let errorReader: Int32?
        do {
            outputReader = try route(standardOutput, to: 1)
            errorReader = try route(standardError, to: 2)
        } catch {
            parentEnds.forEach { _ = close($0) }
            throw error
        }
        // After the opens, so a relative output path means the same as it does to the caller.
        if let workingDirectory {
            _ = GNUExtensions.addChdir(&actions, workingDirectory)
        }
        // Last: the child keeps only 0-2. Descriptors this class creates are close-on-exec, but
        // others in the test process are not (ThreadSanitizer's pipes to llvm-symbolizer, for
        // one): a PostgreSQL watchdog that inherited them outlived the test process and held
        // the symbolizer's input open, and the TSan run of #19 stalled until it was killed.
        _ = GNUExtensions.addCloseFrom(&actions, 3)

        // Default signal handlers and an empty mask: the spawning thread may be a Dispatch
        // worker that blocks signals, and a child that inherited a blocked SIGTERM would
        // ignore `signal(SIGTERM)`.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        argv.append(nil)
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { envp.forEach { free($0) } }
        envp.append(nil)

        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            parentEnds.forEach { _ = close($0) }
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        self.standardOutput = outputReader.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.standardError = errorReader.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    /// Sends `signal` unless the child was already reaped; says whether it was sent.
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        termination.withLock { termination in
            termination == nil && kill(pid, signal) == 0
        }
    }

    /// Blocks until the child has ended and returns how; later calls return the same.
    public func waitForExit() throws(ChildProcessError) -> Termination {
        if let known = termination.withLock({ $0 }) { return known }
        // Waits without reaping (WNOWAIT), so `signal` can never hit a reused pid: the pid stays
        // taken until the reap below, which happens under the same lock that `signal` takes.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 {
            guard errno == EINTR else { break }  // ECHILD: another waiter reaped it
        }
        return try termination.withLock { termination throws(ChildProcessError) -> Termination in
            if let termination { return termination }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 {
                guard errno == EINTR else { throw ChildProcessError("waitpid(\(pid)) failed: errno \(errno)") }
            }
            let ended = Termination(status: status)
            termination = ended
            return ended
        }
    }
}

/// Why a child process could not be started or waited for.
public struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// glibc functions that Swift's Glibc module hides (declared only under `_GNU_SOURCE`), looked
/// up once at run time. Both are in glibc since 2.29 (Debian 12 has 2.36).
private enum GNUExtensions {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// pipe(2) with flags, so close-on-exec is set atomically: a separate fcntl would leave a
    /// window in which another thread's posix_spawn hands the descriptors on.
    static let pipe2: Pipe2 = function("pipe2")
    /// posix_spawn_file_actions_addchdir_np: the child's working directory, set before exec.
    static let addChdir: AddChdir = function("posix_spawn_file_actions_addchdir_np")
    /// posix_spawn_file_actions_addclosefrom_np (glibc 2.34): closes every descriptor from a
    /// number up in the child. Swift's Glibc module does not import it.
    static let addCloseFrom: AddCloseFrom = function("posix_spawn_file_actions_addclosefrom_np")

    private static func function<F>(_ name: String) -> F {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else {
            fatalError("\(name) not found in the C library (glibc 2.34 or later needed)")
        }
        return unsafeBitCast(symbol, to: F.self)
    }
}
