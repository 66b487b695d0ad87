import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// The whole server on PostgreSQL: `HERALD_DATABASE=postgres://…` migrates every module and
/// serves the admin API and public routes as on SQLite.
@Suite struct PostgresServingTests {
    @Test func serverMigratesAndServesOnPostgreSQL() async throws {
        try await RunningHerald.with(backend: .postgres) { herald in
            #expect(try await herald.send("GET", "/readyz").status == 200)
            try await herald.createRealm("pg-realm")
            let duplicate = try await herald.admin("POST", "/api/admin/realms", json: .object(["id": "pg-realm"]))
            #expect(duplicate.status == 409)
            let keys = try await herald.send("GET", "/api/oauth/pg-realm/jwks.json")
            #expect(keys.status == 200)
            #expect(keys.json["keys"]?.arrayValue?.count == 1)
        }
    }

    @Test func nodeKeepsTheConfiguredNumberOfConnections() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let configuration = try HeraldConfiguration.load(arguments: ["--database", url, "--database-connections", "3"],
                                                             environment: [:])
            let database = try await HeraldApplication.openDatabase(configuration: configuration, now: { Date() })
            let sessions = try await database.read { db in
                try db.queryOne("""
                    SELECT count(*) AS n FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name = 'herald'
                    """)?.int("n")
            }
            #expect(sessions == 3)
            await database.close()
        }
    }

    @Test func metricsShowTheConnectionPool() async throws {
        try await RunningHerald.with(backend: .postgres) { herald in
            let text = try await herald.send("GET", "/metrics").text
            #expect(text.contains("herald_postgres_connections 4\n"))  // RunningHerald's
            #expect(text.contains("# TYPE herald_postgres_connections_in_use gauge"))
            #expect(text.contains("# TYPE herald_postgres_connection_waits_total counter"))
            #expect(text.contains("# TYPE herald_postgres_write_conflicts_total counter"))
        }
    }

    @Test func postgresWithoutMasterKeyIsRefused() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let configuration = try HeraldConfiguration.load(arguments: ["--database", url], environment: [:])
            do {
                _ = try await HeraldApplication.open(configuration: configuration,
                                                     logger: Logger(level: .error, now: { Date() }, sink: { _ in }), now: { Date() })
                Issue.record("a PostgreSQL deployment without HERALD_MASTER_KEY must not start")
            } catch let error as ConfigurationError {
                #expect(error.message.contains("HERALD_MASTER_KEY"))
            }
        }
    }
}
