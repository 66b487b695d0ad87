import Foundation
import HeraldTestSupport
import Testing
@testable import herald

/// `herald diagnose google-token` in-process (`DiagnoseTokenCommand.google`), offline against a
/// JWKS file and online against a fake Google.
@Suite("herald diagnose google-token, the command line", .timeLimit(.minutes(1)))
struct DiagnoseGoogleTokenCommandTests {
    static let keys: FakeGoogleKeys = try! FakeGoogleKeys()
    let clock = TestClock()
    var minter: GoogleTokenMinter { GoogleTokenMinter(keys: Self.keys, now: clock.now) }
    var nowArgument: String { String(Int64(clock.now.timeIntervalSince1970)) }

    func run(_ arguments: [String], stdin: String? = nil) async -> (Int32, CapturedOutput) {
        let output = CapturedOutput()
        let status = await DiagnoseTokenCommand.google.run(
            arguments: arguments, standardInput: { stdin }, output: output.out, errorOutput: output.err)
        return (status, output)
    }

    func jwksFile() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let path = directory.file("certs.json")
        try Data(Self.keys.document).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    func report(_ output: CapturedOutput) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any])
    }

    @Test("a valid token: exit 0, verdict valid, every check passed and replay skipped")
    func valid() async throws {
        let (directory, path) = try jwksFile()
        _ = directory
        let (status, output) = await run(["--token", minter.token(), "--client-id", GoogleTokenMinter.defaultClientID,
                                          "--hosted-domain", GoogleTokenMinter.defaultHostedDomain, "--jwks", path,
                                          "--nonce", GoogleTokenMinter.defaultNonce, "--now", nowArgument])
        #expect(status == 0)
        let json = try report(output)
        #expect(json["verdict"] as? String == "valid")
        let checks = try #require(json["checks"] as? [[String: Any]])
        #expect(checks.dropLast().allSatisfy { $0["passed"] as? Bool == true })
        #expect(checks.last?["name"] as? String == "replay")
        #expect((json["claims"] as? [String: Any])?["sub"] as? String == GoogleTokenMinter.defaultSubject)
    }

    @Test("a refused token: exit 1 with the first failed check's reason, later checks skipped")
    func rejected() async throws {
        let (directory, path) = try jwksFile()
        _ = directory
        let (status, output) = await run(["--token=\(minter.token())", "--client-id=other.apps.googleusercontent.com",
                                          "--jwks=\(path)", "--now=\(nowArgument)"])
        #expect(status == 1)
        let json = try report(output)
        #expect(json["reason"] as? String == "audience")
        let checks = try #require(json["checks"] as? [[String: Any]])
        let audience = try #require(checks.firstIndex { $0["name"] as? String == "audience" })
        #expect(checks[audience]["passed"] as? Bool == false)
        #expect(checks[(audience + 1)...].allSatisfy { $0["skipped"] as? Bool == true })
        let (domainStatus, domainOutput) = await run(["--token", minter.token(), "--client-id",
                                                      GoogleTokenMinter.defaultClientID, "--hosted-domain", "other.example",
                                                      "--jwks", path, "--nonce", GoogleTokenMinter.defaultNonce,
                                                      "--now", nowArgument])
        #expect(domainStatus == 1)
        #expect(try report(domainOutput)["reason"] as? String == "hosted_domain")
    }

    @Test("Google's keys unreachable: exit 3, reason google_unavailable, the fetch failure on standard error")
    func unavailable() async throws {
        let server = try FakeJWKSServer(document: Self.keys.document)
        defer { server.stop() }
        server.setBehaviour(.status(500))
        let (status, output) = await run(["--token", "-", "--client-id", GoogleTokenMinter.defaultClientID,
                                          "--jwks", server.url.absoluteString, "--now", nowArgument],
                                         stdin: minter.token() + "\n")
        #expect(status == 3)
        #expect(try report(output)["reason"] as? String == "google_unavailable")
        #expect(output.standardError.contains("Google's JWKS could not be fetched (http_error)"))
    }

    @Test("usage errors exit 2 and name the flag: Apple's --audience is not Google's, a client id is required")
    func usage() async throws {
        let (status, output) = await run(["--token", "t", "--audience", "x"])
        #expect(status == 2)
        #expect(output.standardError.contains("unknown option"))
        let (missing, missingOutput) = await run(["--token", "t"])
        #expect(missing == 2)
        #expect(missingOutput.standardError.contains("at least one --client-id is required"))
        let (help, helpOutput) = await run(["--help"])
        #expect(help == 0)
        #expect(helpOutput.standardOutput.contains("herald diagnose google-token"))
    }
}
