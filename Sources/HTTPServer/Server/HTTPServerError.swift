/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Equatable {
        /// A configuration value is unusable (host not an IP literal, a limit below 1).
        case invalidConfiguration
        /// libmicrohttpd could not start, most often because the address is in use.
        case startFailed
        /// `start()` was called on a server that is running or was shut down.
        case alreadyStarted
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, for operators.
    public let message: String

    /// An error of `code` explained by `message`.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// "startFailed: …".
    public var description: String { "\(code): \(message)" }
}
