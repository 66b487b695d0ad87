import Foundation
import HeraldTestSupport
import JOSE
import Testing

/// `herald diagnose apple-token` as an operator runs it: the real binary in a child process.
/// Issue #19's token (`exp: 1e+20`) killed it with SIGILL; every hostile claim must instead
/// be a report with a reason and exit status 1, and a bad `--now` a usage error (exit 2).
@Suite("herald diagnose apple-token, the binary", .timeLimit(.minutes(3)),
       .enabled(if: CrashSafetyTests.binary != nil, "no herald binary: run `swift build --build-tests` or set HERALD_BINARY"))
struct DiagnosisBinaryTests {
    /// A fixed evaluation time, so `--now` and the minted claims agree.
    static let now = Date(timeIntervalSince1970: 1_780_000_000)

    struct Run {
        let termination: ChildProcess.Termination
        let report: [String: JSONValue]?
        let errorText: String
    }

    /// Runs the binary with `arguments` after `diagnose apple-token`; stdout is parsed as the JSON report.
    func diagnose(_ arguments: [String]) async throws -> Run {
        let binary = try #require(CrashSafetyTests.binary)
        return try await offPool {
            let folder = try TemporaryDirectory()
            let stdout = folder.file("stdout"), stderr = folder.file("stderr")
            // SWIFT_BACKTRACE off: a trap then ends the child at once with its signal, instead
            // of the backtracer holding it (the signal is what this suite looks for).
            var environment = ChildProcess.inheritedEnvironment
            environment["SWIFT_BACKTRACE"] = "enable=no"
            let child = try ChildProcess(executable: binary, arguments: ["diagnose", "apple-token"] + arguments,
                                         environment: environment,
                                         standardOutput: .file(stdout), standardError: .file(stderr))
            let termination = try child.waitForExit()
            // FileHandle, not Data(contentsOf:): on an empty file the latter leaks its 4 KiB read
            // buffer (FoundationEssentials readBytesFromFile; LeakSanitizer, #19 ASan run).
            func contents(_ path: String) -> Data {
                guard let handle = FileHandle(forReadingAtPath: path) else { return Data() }
                defer { try? handle.close() }
                return handle.readDataToEndOfFile()
            }
            let output = contents(stdout), errors = contents(stderr)
            let report = (try? JSONValue.parse(Array(output)))?.objectValue
            return Run(termination: termination, report: report, errorText: String(decoding: errors, as: UTF8.self))
        }
    }

    /// The fake Apple's keys as a JWKS file, and the arguments that use it at ``now``.
    func offlineArguments(_ folder: TemporaryDirectory, token: String) throws -> [String] {
        let path = folder.file("keys.json")
        try Data(fakeAppleKeys.document).write(to: URL(fileURLWithPath: path))
        return ["--token", token, "--audience", AppleTokenMinter.defaultAudience, "--jwks", path,
                "--nonce", AppleTokenMinter.defaultRawNonce, "--now", String(Int64(Self.now.timeIntervalSince1970))]
    }

    func expectRejected(_ run: Run, reason: String, _ label: String) {
        #expect(run.termination.signal == nil, "\(label): killed by signal \(run.termination.signal ?? 0)")
        #expect(run.termination.exitCode == 1, "\(label): \(run.termination)")
        #expect(run.report?["verdict"]?.stringValue == "rejected", "\(label)")
        #expect(run.report?["reason"]?.stringValue == reason, "\(label)")
    }

    @Test("the issue's token (exp 1e+20) exits 1 with reason malformed, no trap")
    func issueTokenIsRejectedNotATrap() async throws {
        let folder = try TemporaryDirectory()
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"rsa1"}"#.utf8))
        let payload = Base64URL.encode(Array(#"{"iss":"https://appleid.apple.com","aud":"com.acme.ios","sub":"x","iat":0,"exp":1e+20}"#.utf8))
        let path = folder.file("keys.json")
        try Data(fakeAppleKeys.document).write(to: URL(fileURLWithPath: path))
        let run = try await diagnose(["--token", "\(header).\(payload).AAAA", "--audience", "com.acme.ios", "--jwks", path])
        expectRejected(run, reason: "malformed", "issue #19 token")
    }

    @Test("hostile numeric claims and out-of-bounds tokens exit 1 with their reason, never a trap")
    func hostileClaimTableIsRejected() async throws {
        let folder = try TemporaryDirectory()
        let minter = AppleTokenMinter(keys: fakeAppleKeys, now: Self.now)
        let issued = Self.now.timeIntervalSince1970
        var table: [(label: String, reason: String, customize: (inout AppleTokenSpec) -> Void)] = []
        for claim in ["exp", "iat", "nbf", "auth_time"] {
            for value in [1e20, 1e308, -1e308, 9.3e18, -9.3e18, -1, 1.5, 253_402_300_800] {
                table.append(("\(claim)=\(value)", "malformed", { $0.claims[claim] = .number(value) }))
            }
        }
        // Issue #20's bounds, signed, so only the bound can be what fails.
        table.append(("iat older than an hour", "expired", {
            $0.claims["iat"] = .number(issued - 3_661); $0.claims["exp"] = .number(issued + 600)
        }))
        table.append(("lifetime over a day", "malformed", { $0.claims["exp"] = .number(issued + 86_401) }))
        table.append(("sub of 256 bytes", "malformed", { $0.claims["sub"] = .string(String(repeating: "s", count: 256)) }))
        for row in table {
            let run = try await diagnose(try offlineArguments(folder, token: minter.token(row.customize)))
            expectRejected(run, reason: row.reason, row.label)
        }
        // The same table's baseline: the untouched token is valid, so each row's change is what failed.
        let valid = try await diagnose(try offlineArguments(folder, token: minter.token()))
        #expect(valid.termination.exitCode == 0, "\(valid.termination) \(valid.errorText)")
        #expect(valid.report?["verdict"]?.stringValue == "valid")
    }

    @Test("--now out of range, fractional or not a number exits 2 with a message naming the flag",
          arguments: ["1.5", "-5", "253402300800", "99999999999999999999999", "1e9", "+1", " 1", "", "0x10", "١٢٣"])
    func badNowIsAUsageError(now: String) async throws {
        let folder = try TemporaryDirectory()
        var arguments = try offlineArguments(folder, token: "x.y.z")
        arguments.removeLast()
        let run = try await diagnose(arguments + [now])
        #expect(run.termination.exitCode == 2, "\(run.termination)")
        #expect(run.errorText.contains("--now must be whole unix seconds from 0 to 253402300799"), "\(run.errorText)")
        #expect(run.report == nil)
    }

    @Test("--now at both ends of its range is accepted")
    func nowAtTheBoundsIsAccepted() async throws {
        let folder = try TemporaryDirectory()
        for now in ["0", "253402300799"] {
            var arguments = try offlineArguments(folder, token: AppleTokenMinter(keys: fakeAppleKeys, now: Self.now).token())
            arguments.removeLast()
            let run = try await diagnose(arguments + [now])
            // Far from the token's times, so rejected on time, but evaluated: exit 1, not 2.
            #expect(run.termination.exitCode == 1, "--now \(now): \(run.termination) \(run.errorText)")
            #expect(run.report?["reason"]?.stringValue == (now == "0" ? "not_yet_valid" : "expired"), "--now \(now)")
        }
    }
}
