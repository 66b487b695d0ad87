import Realms

/// One-time work at start after migrations (e.g. registering the environment's admin token).
enum HeraldBootstrap {
    static func run(context: HeraldContext) async throws {
        // Registers HERALD_ADMIN_TOKEN as "env", or removes "env" when the variable is unset.
        try await AdminTokenStore(database: context.database, now: context.now)
            .registerEnvironmentToken(context.configuration.adminToken)
    }
}
