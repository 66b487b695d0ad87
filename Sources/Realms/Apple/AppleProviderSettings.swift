import JOSE

/// The Apple provider as an operator writes it (PUT): the whole configuration, with defaults
/// for what is left out — except the private key, which is kept unless replaced or removed,
/// so editing audiences does not require pasting the key again.
public struct AppleProviderSettings: Sendable, Equatable {
    /// What happens to the stored private key.
    public enum PrivateKeyUpdate: Sendable, Equatable {
        case keep
        case remove
        /// A PKCS#8 PEM (Apple's .p8 file).
        case replace(String)
    }

    /// Largest accepted PEM text.
    public static let maxPrivateKeyLength = 16_384

    public var enabled: Bool?
    public var clientId: String?
    public var audiences: [String]?
    public var teamId: String?
    public var keyId: String?
    public var privateKey: PrivateKeyUpdate
    public var scopes: [String]?
    /// The web flow's Return URLs (see `AppleProviderConfig.returnUrls`); nil: none.
    public var returnUrls: [String]?

    /// At most this many Return URLs (Apple's own form takes ten).
    public static let maxReturnUrls = 10

    public init(enabled: Bool? = nil, clientId: String? = nil, audiences: [String]? = nil, teamId: String? = nil,
                keyId: String? = nil, privateKey: PrivateKeyUpdate = .keep, scopes: [String]? = nil,
                returnUrls: [String]? = nil) {
        self.enabled = enabled
        self.clientId = clientId
        self.audiences = audiences
        self.teamId = teamId
        self.keyId = keyId
        self.privateKey = privateKey
        self.scopes = scopes
        self.returnUrls = returnUrls
    }

    /// The validated settings, with the parsed private key when one is given.
    struct Validated: Sendable {
        let enabled: Bool
        let clientId: String
        let audiences: [String]
        let teamId: String?
        let keyId: String?
        let privateKey: PrivateKeyUpdate
        let privateKeyDER: [UInt8]?
        let scopes: [String]
        let returnUrls: [String]
    }

    /// Problems with the given fields (the private key is parsed to check it), by API field name.
    public func fieldIssues() -> [FieldIssue] {
        do {
            _ = try validated()
            return []
        } catch {
            return error.fieldIssues
        }
    }

    /// Checks every field and parses the private key; throws `invalidInput` naming each bad field.
    func validated() throws(RealmsError) -> Validated {
        var issues = FieldIssues()
        if let clientId {
            if let problem = InputRules.appleIdentifierProblem(clientId) { issues.add("clientId", problem) }
        } else {
            issues.add("clientId", "is required")
        }
        let audiences = self.audiences ?? []
        if audiences.count > AppleProviderConfig.maxAudiences {
            issues.add("audiences", "must have at most \(AppleProviderConfig.maxAudiences) entries")
        }
        for (index, audience) in audiences.enumerated() {
            let field = "audiences[\(index)]"
            if let problem = InputRules.appleIdentifierProblem(audience) {
                issues.add(field, problem)
            } else if audience == clientId {
                issues.add(field, "duplicates clientId")
            } else if audiences[..<index].contains(audience) {
                issues.add(field, "is a duplicate")
            }
        }
        if let teamId, let problem = InputRules.appleTenCharacterIDProblem(teamId) { issues.add("teamId", problem) }
        if let keyId, let problem = InputRules.appleTenCharacterIDProblem(keyId) { issues.add("keyId", problem) }
        let scopes = self.scopes ?? AppleProviderConfig.knownScopes
        for (index, scope) in scopes.enumerated() {
            if !AppleProviderConfig.knownScopes.contains(scope) {
                issues.add("scopes[\(index)]", "must be one of: \(AppleProviderConfig.knownScopes.joined(separator: ", "))")
            } else if scopes[..<index].contains(scope) {
                issues.add("scopes[\(index)]", "is a duplicate")
            }
        }
        // Apple accepts only https Return URLs and matches them exactly; http is allowed for
        // loopback so the flow runs against a fake Apple in tests.
        let returnUrls = self.returnUrls ?? []
        if returnUrls.count > Self.maxReturnUrls {
            issues.add("returnUrls", "must have at most \(Self.maxReturnUrls) entries")
        }
        for (index, url) in returnUrls.enumerated() {
            if let problem = InputRules.loginURLProblem(url) {
                issues.add("returnUrls[\(index)]", problem)
            } else if url.contains("?") {
                issues.add("returnUrls[\(index)]", "must not contain a query")
            } else if returnUrls[..<index].contains(url) {
                issues.add("returnUrls[\(index)]", "is a duplicate")
            }
        }
        var der: [UInt8]?
        if case .replace(let pem) = privateKey {
            der = Self.privateKeyDER(pem: pem, issues: &issues)
        }
        try issues.throwIfAny()
        return Validated(enabled: enabled ?? true, clientId: clientId ?? "", audiences: audiences, teamId: teamId,
                         keyId: keyId, privateKey: privateKey, privateKeyDER: der, scopes: scopes,
                         returnUrls: returnUrls)
    }

    /// Parses an Apple .p8 key; reasons never include the key text.
    private static func privateKeyDER(pem: String, issues: inout FieldIssues) -> [UInt8]? {
        guard pem.utf8.count <= maxPrivateKeyLength else {
            issues.add("privateKey", "must be at most \(maxPrivateKeyLength) bytes")
            return nil
        }
        guard let key = try? PrivateKey(pkcs8PEM: pem) else {
            issues.add("privateKey", "must be a PKCS#8 PEM private key (Apple .p8 file)")
            return nil
        }
        guard key.keyType == .ecP256 else {
            issues.add("privateKey", "must be an EC P-256 key (Apple .p8 file)")
            return nil
        }
        guard let der = try? key.pkcs8DER() else {
            issues.add("privateKey", "could not be exported")
            return nil
        }
        return der
    }
}
