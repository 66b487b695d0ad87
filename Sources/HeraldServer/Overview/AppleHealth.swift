/// The overview's Apple panel: the key set Herald verifies Apple's tokens with, the web flow's
/// configuration and last code exchange, server-to-server notifications and stored tokens.
/// Never the private key or any token: only whether one is there, and counts.
struct AppleHealth: Sendable, Encodable, Equatable {
    /// Apple's JWKS as this node holds it (one cache for every realm).
    struct Keys: Sendable, Encodable, Equatable {
        /// A fetch that failed.
        struct Failure: Sendable, Encodable, Equatable {
            let outcome: String
            let at: Int64
        }

        let lastSuccessAt: Int64?
        let ageSeconds: Int64?
        let freshUntil: Int64?
        let keyIds: [String]
        let lastFailure: Failure?
        /// Past its freshness and the last refresh failed.
        let stale: Bool
    }

    /// The last exchange of an authorization code with Apple.
    struct Exchange: Sendable, Encodable, Equatable {
        let ok: Bool
        /// Apple's error or the transport's (`invalid_client`, `timeout`…), when not ok.
        let error: String?
        let at: Int64
    }

    /// Apple's latest refusal of an exchange (the security event `apple.code_exchange_refused`).
    struct Refusal: Sendable, Encodable, Equatable {
        let error: String
        let at: Int64
    }

    /// The web flow's configuration: whether each part is set, never its value.
    struct WebFlow: Sendable, Encodable, Equatable {
        let teamIdSet: Bool
        let keyIdSet: Bool
        let privateKeyStored: Bool
        let returnUrls: Int
        /// This node's latest exchange since it started.
        let lastExchange: Exchange?
        let lastRefusal: Refusal?
    }

    /// One notification.
    struct Notification: Sendable, Encodable, Equatable {
        let type: String
        let receivedAt: Int64
    }

    /// Server-to-server notifications.
    struct Notifications: Sendable, Encodable, Equatable {
        let last: Notification?
        /// Received within the overview's window, by type.
        let byType: [String: Int64]
    }

    /// Apple refresh tokens and their revocations.
    struct Tokens: Sendable, Encodable, Equatable {
        let refreshTokens: Int64
        let pendingRevocations: Int64
        let failedRevocations: Int64
    }

    /// An Apple provider is stored for the realm.
    let configured: Bool
    let enabled: Bool
    let keys: Keys
    let webFlow: WebFlow
    let notifications: Notifications
    let tokens: Tokens
}
