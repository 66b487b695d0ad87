import HTTPServer
import Realms
import TokenIssuer

/// A list page as the admin API answers it: `{"items":[…],"nextCursor":"…"|null}`.
struct ListResponse<Item: Encodable & Sendable>: Encodable, Sendable {
    let items: [Item]
    let nextCursor: String?

    init(_ page: Page<Item>) {
        items = page.items
        nextCursor = page.nextCursor
    }

    private enum CodingKeys: String, CodingKey { case items, nextCursor }

    // Written out so the last page says `"nextCursor":null` rather than leaving it out.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// A client app, plus `clientSecret` when this response generated one (shown once).
struct ClientAppResponse: Encodable, Sendable {
    let result: ClientAppWithSecret

    private enum CodingKeys: String, CodingKey { case clientSecret }

    func encode(to encoder: any Encoder) throws {
        try result.client.encode(to: encoder)
        if let secret = result.clientSecret {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(secret, forKey: .clientSecret)
        }
    }
}

/// An account with its linked identities.
struct AccountDetailResponse: Encodable, Sendable {
    let account: Account
    let identities: [Identity]

    private enum CodingKeys: String, CodingKey { case identities }
    private enum IdentityKeys: String, CodingKey { case provider, openId, email, linkedAt, emailRelayEnabled }

    func encode(to encoder: any Encoder) throws {
        try account.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        var list = container.nestedUnkeyedContainer(forKey: .identities)
        for identity in identities {
            var item = list.nestedContainer(keyedBy: IdentityKeys.self)
            try item.encode(identity.provider, forKey: .provider)
            try item.encode(identity.openId, forKey: .openId)
            try item.encode(identity.email, forKey: .email)
            try item.encode(identity.linkedAt, forKey: .linkedAt)
            try item.encode(identity.emailRelayEnabled, forKey: .emailRelayEnabled)
        }
    }
}

extension HTTPResponse {
    /// 204 for a completed delete.
    static var noContent: HTTPResponse { HTTPResponse(status: 204) }
}

/// A signing key as the admin API answers it. Written out so an active key says
/// `"retiredAt":null,"publishUntil":null` (the `SigningKey` schema requires both) rather
/// than leaving them out, as synthesized `Encodable` does with nil.
struct SigningKeyResponse: Encodable, Sendable {
    let key: SigningKeyInfo

    private enum CodingKeys: String, CodingKey { case kid, algorithm, status, createdAt, retiredAt, publishUntil }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key.kid, forKey: .kid)
        try container.encode(key.algorithm, forKey: .algorithm)
        try container.encode(key.status, forKey: .status)
        try container.encode(key.createdAt, forKey: .createdAt)
        try container.encode(key.retiredAt, forKey: .retiredAt)
        try container.encode(key.publishUntil, forKey: .publishUntil)
    }
}

/// An admin token as the admin API answers it: name, role, scope (`allRealms`, and `realms`
/// sorted, empty for an all-realms token), creation time, and `token` only in the create
/// response (shown once).
struct AdminTokenResponse: Encodable, Sendable {
    let token: AdminToken
    let secret: String?

    init(_ token: AdminToken, secret: String? = nil) {
        self.token = token
        self.secret = secret
    }

    private enum CodingKeys: String, CodingKey { case name, role, allRealms, realms, createdAt, token }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token.name, forKey: .name)
        try container.encode(token.role.rawValue, forKey: .role)
        try container.encode(token.scope == .allRealms, forKey: .allRealms)
        try container.encode(token.scope.sortedRealmIDs ?? [], forKey: .realms)
        try container.encode(token.createdAt, forKey: .createdAt)
        if let secret { try container.encode(secret, forKey: .token) }
    }
}
