import Foundation
import HeraldTestSupport
import Realms
import Storage
import Testing
@testable import HeraldServer

/// `herald admin create-token | list-tokens | revoke-token`, run as the real binary.
@Suite("Admin token command line")
struct AdminTokenCLITests {
    /// One finished run: exit code and what it wrote.
    struct Run {
        let exitCode: Int32?
        let output: String
        let error: String
    }

    /// Runs the binary with `arguments` against `database` and waits for it (on a thread of its own: waitpid blocks).
    static func herald(_ arguments: [String], database: String, folder: TemporaryDirectory) async throws -> Run {
        let binary = try #require(CrashSafetyTests.binary)
        let output = folder.file("stdout-\(UUID().uuidString)")
        let error = folder.file("stderr-\(UUID().uuidString)")
        let environment = ChildProcess.inheritedEnvironment.filter { !$0.key.hasPrefix("HERALD_") }
        let process = try ChildProcess(executable: binary, arguments: arguments + ["--database", database],
                                       environment: environment, standardOutput: .file(output), standardError: .file(error))
        let termination = try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { () throws(ChildProcessError) in try process.waitForExit() })
            }.start()
        }
        return Run(exitCode: termination.exitCode,
                   output: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "",
                   error: (try? String(contentsOfFile: error, encoding: .utf8)) ?? "")
    }

    @Test("create-token --realm … --role viewer makes a scoped viewer, printed once; list-tokens shows role and realms",
          .enabled(if: CrashSafetyTests.binary != nil, "no herald binary: run `swift build --build-tests` or set HERALD_BINARY"))
    func scopedViewer() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("herald.db")
        let database = "sqlite:" + path
        #expect(try await Self.herald(["migrate"], database: database, folder: folder).exitCode == 0)
        do {
            let db = try SQLiteDatabase(path: path, now: { Date() })
            let realms = RealmStore(database: db, now: { Date() })
            for id in ["acme", "globex"] { _ = try await realms.create(id: id, context: ChangeContext(actor: "test")) }
            await db.close()
        }
        let created = try await Self.herald(["admin", "create-token", "--name", "support", "--realm", "acme",
                                             "--realm", "globex", "--role", "viewer"], database: database, folder: folder)
        #expect(created.exitCode == 0, "\(created.error)")
        let token = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("hadm_"))
        #expect(created.error.contains("viewer") && !created.error.contains(token))

        let plain = try await Self.herald(["admin", "create-token", "--name", "deploy"], database: database, folder: folder)
        #expect(plain.exitCode == 0)

        let listed = try await Self.herald(["admin", "list-tokens"], database: database, folder: folder)
        #expect(listed.exitCode == 0)
        let rows = listed.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.map { $0.count } == [4, 4])
        #expect(rows.first.map { [$0[0], $0[2], $0[3]] } == ["deploy", "admin", "all realms"])
        #expect(rows.last.map { [$0[0], $0[2], $0[3]] } == ["support", "viewer", "realms acme,globex"])
        #expect(!listed.output.contains(token))

        let db = try SQLiteDatabase(path: path, now: { Date() })
        let stored = try await AdminTokenStore(database: db, now: { Date() }).token(presented: token)
        await db.close()
        #expect(stored?.role == .viewer)
        #expect(stored?.scope == .realms(["acme", "globex"]))
    }

    @Test("bad --role, an unknown realm or --realm elsewhere is refused and prints no token",
          .enabled(if: CrashSafetyTests.binary != nil, "no herald binary: run `swift build --build-tests` or set HERALD_BINARY"))
    func refusals() async throws {
        let folder = try TemporaryDirectory()
        let database = "sqlite:" + folder.file("herald.db")
        let cases: [([String], String)] = [
            (["admin", "create-token", "--name", "x", "--role", "root"], "--role"),
            (["admin", "create-token", "--name", "x", "--realm", "no-such-realm"], "realms"),
            (["admin", "create-token", "--name", "x", "--realm", "Not A Slug"], "realms"),
            (["admin", "revoke-token", "--name", "x", "--realm", "acme"], "--realm"),
            (["admin", "create-token", "--name", "x", "--role", "viewer", "--role", "admin"], "unreadable"),
        ]
        for (arguments, mention) in cases {
            let run = try await Self.herald(arguments, database: database, folder: folder)
            #expect(run.exitCode == 2, "\(arguments): \(run.error)")
            #expect(run.output.isEmpty, "\(arguments)")
            #expect(run.error.contains(mention), "\(arguments): \(run.error)")
        }
        let listed = try await Self.herald(["admin", "list-tokens"], database: database, folder: folder)
        #expect(listed.exitCode == 0 && listed.output.isEmpty)
    }
}
