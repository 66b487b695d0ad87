import HTTPServer
import Realms
import TokenIssuer

/// `/api/admin/realms[/:realm]`. Creating a realm creates its first signing key in the same
/// transaction; changing its signing algorithm activates a new key of that algorithm.
struct RealmAdminHandlers: Sendable {
    let stores: AdminStores

    static let fields: Set<String> = [
        "displayName", "enabled", "registrationEnabled", "emailLinking", "nonceRequired", "accessTokenTTL",
        "refreshTokenTTL", "refreshIdleTTL", "loginUrl", "signingAlgorithm", "rateLimit",
    ]

    var routes: [AdminRoute] {
        [
            // The list answers only the caller's realms.
            AdminRoute("GET", "/api/admin/realms", reach: .scoped, list),
            AdminRoute("POST", "/api/admin/realms", create),
            AdminRoute("GET", "/api/admin/realms/:realm", read),
            AdminRoute("PATCH", "/api/admin/realms/:realm", update),
            // Deleting a realm is a change to the set of realms, like creating one.
            AdminRoute("DELETE", "/api/admin/realms/:realm", reach: .allRealmsOnly, delete),
        ]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        try query.validate()
        return .json(ListResponse(try await stores.realms.list(page: page, only: caller.visibleRealms)))
    }

    func create(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        var body = try JSONRequestBody(request, allowedFields: Self.fields.union(["id"]))
        let id = body.string("id", required: true, maxLength: 63)
        let changes = Self.changes(from: &body)
        if let id, let problem = InputRules.realmIDProblem(id) { body.problem("id", problem) }
        body.add(changes.fieldIssues())
        try body.validate()
        let realmID = id ?? ""
        // Generated before the transaction: RSA key generation must not hold the writer.
        let key = try stores.keyRing.prepareKey(realmID: realmID, algorithm: changes.signingAlgorithm ?? .es256)
        let keyRing = stores.keyRing
        let realm = try await stores.realms.create(id: realmID, changes: changes, context: context) { db, _ in
            try keyRing.activate(key, in: db)
        }
        return .json(status: 201, realm)
    }

    func read(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        guard let realm = try await stores.realms.realm(request.parameter("realm")) else { throw RealmsError.notFound("realm") }
        return .json(realm)
    }

    func update(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        let realmID = request.parameter("realm")
        var body = try JSONRequestBody(request, allowedFields: Self.fields)
        let changes = Self.changes(from: &body)
        body.add(changes.fieldIssues())
        try body.validate()
        guard let current = try await stores.realms.realm(realmID) else { throw RealmsError.notFound("realm") }
        var key: PreparedSigningKey?
        if let algorithm = changes.signingAlgorithm, algorithm != current.signingAlgorithm {
            key = try stores.keyRing.prepareKey(realmID: realmID, algorithm: algorithm)
        }
        let keyRing = stores.keyRing
        let prepared = key
        let realm = try await stores.realms.update(realmID, changes: changes, context: context) { db, before, after in
            if before.signingAlgorithm != after.signingAlgorithm, let prepared, prepared.algorithm == after.signingAlgorithm {
                try keyRing.activate(prepared, in: db)
            }
        }
        return .json(realm)
    }

    func delete(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        try await stores.realms.delete(request.parameter("realm"), context: context)
        return .noContent
    }

    /// The realm settings in a create or update body; problems are recorded on `body`.
    static func changes(from body: inout JSONRequestBody) -> RealmChanges {
        body.refuseNull(["displayName", "enabled", "registrationEnabled", "emailLinking", "nonceRequired",
                         "accessTokenTTL", "refreshTokenTTL", "signingAlgorithm", "rateLimit"])
        var changes = RealmChanges(
            displayName: body.string("displayName", maxLength: 1024),
            enabled: body.bool("enabled"),
            registrationEnabled: body.bool("registrationEnabled"),
            emailLinking: body.enumeration("emailLinking", EmailLinking.self),
            nonceRequired: body.bool("nonceRequired"),
            accessTokenTTL: body.integer("accessTokenTTL", in: Realm.accessTokenTTLRange),
            refreshTokenTTL: body.integer("refreshTokenTTL", in: Realm.refreshTokenTTLRange),
            refreshIdleTTL: body.nullableInteger("refreshIdleTTL", in: Realm.refreshIdleTTLRange),
            loginUrl: body.nullableString("loginUrl", maxLength: InputRules.maxURLLength),
            signingAlgorithm: body.enumeration("signingAlgorithm", SigningAlgorithm.self))
        body.nested("rateLimit", allowed: ["failuresPerWindow", "windowSeconds"]) { members, problem in
            if let value = members["failuresPerWindow"] {
                changes.failuresPerWindow = JSONRequestBody.integer(value, in: RateLimit.failuresRange)
                if changes.failuresPerWindow == nil {
                    problem("failuresPerWindow", "must be an integer from \(RateLimit.failuresRange.lowerBound) to \(RateLimit.failuresRange.upperBound)")
                }
            }
            if let value = members["windowSeconds"] {
                changes.windowSeconds = JSONRequestBody.integer(value, in: RateLimit.windowRange)
                if changes.windowSeconds == nil {
                    problem("windowSeconds", "must be an integer from \(RateLimit.windowRange.lowerBound) to \(RateLimit.windowRange.upperBound)")
                }
            }
        }
        return changes
    }
}
