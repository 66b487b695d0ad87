import Synchronization

/// Runs the application's services in one task group, started with the listeners; `shutdown()`
/// cancels the group and waits until every service has returned, so none is still working when
/// the database is closed. This is the one place background work is started.
final class ServiceGroup: Sendable {
    private let services: [any Service]
    private let logger: Logger
    private let running = Mutex<Task<Void, Never>?>(nil)

    init(services: [any Service], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// Starts every service; a second call does nothing.
    func start() {
        let services = services
        let logger = logger
        running.withLock { running in
            guard running == nil else { return }
            // The group's owner is this value: `shutdown()` cancels and awaits it.
            running = Task {
                await withTaskGroup(of: Void.self) { group in
                    for service in services {
                        group.addTask {
                            do {
                                try await service.run()
                            } catch is CancellationError {
                            } catch {
                                // Type only: a storage error's text may quote SQL.
                                logger.error("service_failed", ["service": .string(String(describing: type(of: service))),
                                                                "errorType": .string(String(describing: type(of: error)))])
                            }
                        }
                    }
                }
            }
        }
    }

    /// Cancels every service and waits for each to return.
    func shutdown() async {
        guard let group = running.withLock({ $0.take() }) else { return }
        group.cancel()
        await group.value
    }
}
