/// One-time work at start after migrations (e.g. registering the environment's admin token).
enum HeraldBootstrap {
    static func run(context: HeraldContext) async throws {}
}
