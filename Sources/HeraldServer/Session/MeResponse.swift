import Realms

/// `GET /me`: the account with its linked providers. Also the `user` of first-party login and
/// refresh responses, so both are written by this one encoder and cannot drift apart.
struct MeResponse: Encodable, Sendable {
    let profile: AccountProfile

    init(_ profile: AccountProfile) { self.profile = profile }

    private enum CodingKeys: String, CodingKey { case id, email, emailVerified, isPrivateEmail, name, status, createdAt, identities }
    private enum IdentityKeys: String, CodingKey { case provider, linkedAt }

    func encode(to encoder: any Encoder) throws {
        let account = profile.account
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(account.id, forKey: .id)
        try container.encode(account.email, forKey: .email)
        try container.encode(account.emailVerified, forKey: .emailVerified)
        try container.encode(account.isPrivateEmail, forKey: .isPrivateEmail)
        try container.encode(account.name, forKey: .name)
        try container.encode(account.status.rawValue, forKey: .status)
        try container.encode(account.createdAt, forKey: .createdAt)
        var list = container.nestedUnkeyedContainer(forKey: .identities)
        for identity in profile.identities {
            var item = list.nestedContainer(keyedBy: IdentityKeys.self)
            try item.encode(identity.provider, forKey: .provider)
            try item.encode(identity.linkedAt, forKey: .linkedAt)
        }
    }
}
