/// Long-running background work with one owner (swift-service-lifecycle's shape, which Herald
/// cannot fetch): `run()` works until its task is cancelled, then finishes what must not be lost
/// and returns. `ServiceGroup` runs every service of the application and awaits them at shutdown.
protocol Service: Sendable {
    func run() async throws
}
