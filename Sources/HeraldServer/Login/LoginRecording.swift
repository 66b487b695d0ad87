/// What the one log line and metric per login attempt need, in both doors
/// (`NativeLoginRoutes.record`).
struct LoginRecording: Sendable {
    /// The login pipeline's provider label.
    let provider: String
    let metrics: HeraldMetrics
    let logger: Logger
}
