import Foundation
import HeraldTestSupport
import Synchronization
import Testing
@testable import herald

/// Collects what the command prints.
final class CapturedOutput: Sendable {
    private let lines = Mutex<(out: [String], err: [String])>(([], []))
    var standardOutput: String { lines.withLock { $0.out.joined(separator: "\n") } }
    var standardError: String { lines.withLock { $0.err.joined(separator: "\n") } }
    func out(_ text: String) { lines.withLock { $0.out.append(text) } }
    func err(_ text: String) { lines.withLock { $0.err.append(text) } }
}

/// `herald diagnose apple-token`'s command line (`DiagnoseTokenCommand.apple`, the herald target)
/// in-process, with its own standard input and outputs; the real binary is
/// `HeraldServerTests/DiagnosisBinaryTests`, the diagnosis itself `HeraldAppleTests/DiagnosisTests`.
@Suite("herald diagnose apple-token, the command line", .timeLimit(.minutes(1)))
struct DiagnoseAppleTokenCommandTests {
    static let keys: FakeAppleKeys = try! FakeAppleKeys()
    let clock = TestClock()
    var minter: AppleTokenMinter { AppleTokenMinter(keys: Self.keys, now: clock.now) }

    func run(_ arguments: [String], stdin: String? = nil) async -> (Int32, CapturedOutput) {
        let output = CapturedOutput()
        let status = await DiagnoseTokenCommand.apple.run(
            arguments: arguments, standardInput: { stdin }, output: output.out, errorOutput: output.err)
        return (status, output)
    }

    func jwksFile() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.file("jwks.json")
        try Data(Self.keys.document).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    var nowArgument: String { String(Int64(clock.now.timeIntervalSince1970)) }

    @Test func commandExitsZeroForAValidTokenOffline() async throws {
        let (directory, path) = try jwksFile()
        _ = directory
        let (status, output) = await run(["--token", minter.token(), "--audience", "com.example.other",
                                          "--audience", AppleTokenMinter.defaultAudience, "--jwks", path,
                                          "--nonce", AppleTokenMinter.defaultRawNonce, "--now", nowArgument])
        #expect(status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any])
        #expect(json["verdict"] as? String == "valid")
        #expect(output.standardError.isEmpty)
    }

    @Test func commandExitsOneWhenRejected() async throws {
        let (directory, path) = try jwksFile()
        _ = directory
        let (status, output) = await run(["--token=\(minter.token())", "--audience=com.other", "--jwks=\(path)",
                                          "--nonce=\(AppleTokenMinter.defaultRawNonce)", "--now=\(nowArgument)"])
        #expect(status == 1)
        #expect(output.standardOutput.contains("\"reason\": \"audience\""))
    }

    @Test func commandReadsTheTokenFromStandardInput() async throws {
        let (directory, path) = try jwksFile()
        _ = directory
        let (status, _) = await run(["--token", "-", "--audience", AppleTokenMinter.defaultAudience, "--jwks", path,
                                     "--nonce", AppleTokenMinter.defaultRawNonce, "--now", nowArgument],
                                    stdin: minter.token() + "\n")
        #expect(status == 0)
    }

    @Test func commandExitsThreeWhenTheJWKSURLIsDead() async throws {
        let server = try FakeJWKSServer(document: Self.keys.document)
        defer { server.stop() }
        server.setBehaviour(.status(500))
        let (status, output) = await run(["--token", minter.token(), "--audience", AppleTokenMinter.defaultAudience,
                                          "--jwks", server.url.absoluteString, "--now", nowArgument])
        #expect(status == 3)
        #expect(output.standardOutput.contains("apple_unavailable"))
        #expect(output.standardError.contains("http_error"))
    }

    @Test func commandFetchesFromAJWKSURL() async throws {
        let server = try FakeJWKSServer(document: Self.keys.document)
        defer { server.stop() }
        let (status, _) = await run(["--token", minter.token(), "--audience", AppleTokenMinter.defaultAudience,
                                     "--jwks", server.url.absoluteString, "--nonce", AppleTokenMinter.defaultRawNonce,
                                     "--now", nowArgument])
        #expect(status == 0)
        #expect(server.requestCount == 1)
    }

    @Test(arguments: [
        ["--audience", "a"],                                          // no --token
        ["--token", "t"],                                             // no --audience
        ["--token", "t", "--audience", "a", "--verbose"],             // unknown flag
        ["--token", "t", "--audience", "a", "extra"],                 // stray argument
        ["--token", "t", "--audience"],                               // missing value
        ["--token", "t", "--audience", "a", "--now", "yesterday"],    // bad --now
        ["--token", "t", "--audience", "a", "--now", "-5"],           // bad --now
        ["--token", "t", "--audience", "a", "--jwks", "/nonexistent/jwks.json"],  // unreadable file
    ])
    func usageErrorsExitTwo(_ arguments: [String]) async throws {
        let (status, output) = await run(arguments)
        #expect(status == 2)
        #expect(output.standardOutput.isEmpty)
        #expect(!output.standardError.isEmpty)
    }

    @Test func fileThatIsNotAJWKSIsAUsageError() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("not.json")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
        let (status, _) = await run(["--token", "t", "--audience", "a", "--jwks", path])
        #expect(status == 2)
    }

    @Test func usageErrorsNeverEchoTheToken() async throws {
        let token = minter.token()
        let (status, output) = await run(["--token", token, "--audience", "a", "--bogus"])
        #expect(status == 2)
        #expect(!output.standardError.contains(token))
    }

    @Test func helpDocumentsTheExitCodes() async throws {
        let (status, output) = await run(["--help"])
        #expect(status == 0)
        for fragment in ["0 valid", "1 rejected", "2 usage", "3 Apple's JWKS", "--jwks FILE|URL", "--now"] {
            #expect(output.standardOutput.contains(fragment), "\(fragment)")
        }
    }
}
