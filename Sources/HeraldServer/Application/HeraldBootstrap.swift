import Realms

/// One-time work at start after migrations (e.g. registering the environment's admin token).
enum HeraldBootstrap {
    static func run(services: HeraldServices) async throws {
        // Registers HERALD_ADMIN_TOKEN as "env", or removes "env" when the variable is unset.
        try await services.adminTokens.registerEnvironmentToken(services.configuration.adminToken)
    }
}
