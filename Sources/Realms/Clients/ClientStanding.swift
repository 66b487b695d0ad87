import Storage

/// A client app as a session sees it each time one of its tokens is used: which registration
/// of the client id is live, whether it is enabled, what kind of client it is now and which
/// scopes it may still hold. Admin changes to a client therefore reach its live sessions at
/// once. Sessions read it by joining `client_apps` onto the row they read anyway, so using a
/// token costs no extra query.
public struct ClientStanding: Sendable, Equatable {
    /// The registration of the client id (`ClientApp.instanceID`).
    public let instanceID: String
    public let enabled: Bool
    public let firstParty: Bool
    public let confidential: Bool
    public let allowedScopes: [String]

    /// A standing with these values (tests build them by hand).
    public init(instanceID: String, enabled: Bool, firstParty: Bool, confidential: Bool, allowedScopes: [String]) {
        self.instanceID = instanceID
        self.enabled = enabled
        self.firstParty = firstParty
        self.confidential = confidential
        self.allowedScopes = allowedScopes
    }

    /// `LEFT JOIN client_apps` as `standing_client` on the row's realm and client id columns
    /// (`s.realm_id`, `s.client_id`); a deleted client joins as NULLs.
    public static func join(realmColumn: String, clientColumn: String) -> String {
        "LEFT JOIN client_apps standing_client ON standing_client.realm_id = \(realmColumn) AND standing_client.client_id = \(clientColumn)"
    }

    /// The select list that ``init(joinedRow:)`` reads, for a query using ``join(realmColumn:clientColumn:)``.
    public static let columns = """
        standing_client.instance_id AS standing_instance_id, standing_client.enabled AS standing_enabled, \
        standing_client.first_party AS standing_first_party, standing_client.confidential AS standing_confidential, \
        standing_client.allowed_scopes AS standing_allowed_scopes
        """

    /// The joined client's standing, or nil when the client no longer exists.
    public init?(joinedRow row: Row) throws(StorageError) {
        guard let instanceID = try row.optionalString("standing_instance_id") else { return nil }
        self.instanceID = instanceID
        enabled = try row.bool("standing_enabled")
        firstParty = try row.bool("standing_first_party")
        confidential = try row.bool("standing_confidential")
        allowedScopes = try JSONColumn.strings(row, "standing_allowed_scopes")
    }

    /// Whether a session bound to `instanceID` may still be used: the client is the same
    /// registration (not deleted and re-created under its id) and enabled.
    public func admits(sessionOf instanceID: String) -> Bool {
        enabled && self.instanceID == instanceID
    }

    /// Whether the first-party session API (`/api/auth/…`) serves this client: a first-party
    /// app without a secret. A confidential client refreshes at `/token`, authenticated.
    public var usesSessionAPI: Bool { firstParty && !confidential }

    /// `scope` without what the client may no longer be granted, in its order.
    public func capping(_ scope: [String]) -> [String] {
        let allowed = Set(allowedScopes)
        return scope.filter(allowed.contains)
    }
}
