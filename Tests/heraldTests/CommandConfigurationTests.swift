import Testing
@testable import herald

/// What `herald migrate` and `herald admin …` open the database with.
@Suite("One-shot commands' configuration")
struct CommandConfigurationTests {
    @Test func aOneShotCommandUsesOneConnectionWhateverTheServingSetting() throws {
        let configuration = try HeraldCommandLine.commandConfiguration(
            arguments: ["--database", "postgres://herald@127.0.0.1:5432/herald"],
            environment: ["HERALD_DATABASE_CONNECTIONS": "32"])
        #expect(configuration.databaseConnections == 1)
        #expect(configuration.database == .postgres(url: "postgres://herald@127.0.0.1:5432/herald"))
    }

    @Test func aBadSettingIsStillRefused() {
        #expect(throws: (any Error).self) {
            try HeraldCommandLine.commandConfiguration(arguments: [], environment: ["HERALD_DATABASE_CONNECTIONS": "0"])
        }
    }
}
