import HTTPServer
import HeraldApple
import JOSE
import Realms

/// `/api/admin/realms/:realm/accounts[/:account]`: listing with filters and cursor paging,
/// status and profile changes, deletion. (Session listing comes with TokenIssuer's sessions.)
struct AccountAdminHandlers: Sendable {
    let stores: AdminStores

    static let fields: Set<String> = ["status", "email", "emailVerified", "name"]
    static let nameFields: Set<String> = ["givenName", "familyName", "displayName"]
    /// Longest account id accepted in a path; longer ones cannot exist.
    static let maxAccountIDLength = 64

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/realms/:realm/accounts", list),
            AdminRoute("GET", "/api/admin/realms/:realm/accounts/:account", read),
            AdminRoute("PATCH", "/api/admin/realms/:realm/accounts/:account", update),
            AdminRoute("DELETE", "/api/admin/realms/:realm/accounts/:account", delete),
        ]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        let filter = AccountFilter(email: query.text("email", maxLength: 254),
                                   status: query.enumeration("status", AccountStatus.self),
                                   provider: query.text("provider", maxLength: 32))
        try query.validate()
        return .json(ListResponse(try await stores.accounts.list(realmID: request.parameter("realm"), filter: filter,
                                                                 page: page)))
    }

    func read(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        let accountID = try Self.accountID(request)
        guard try await stores.realms.realm(realmID) != nil else { throw RealmsError.notFound("realm") }
        guard let account = try await stores.accounts.account(realmID: realmID, id: accountID) else {
            throw RealmsError.notFound("account")
        }
        let identities = try await stores.accounts.identities(realmID: realmID, accountID: accountID)
        return .json(AccountDetailResponse(account: account, identities: identities))
    }

    func update(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        let accountID = try Self.accountID(request)
        var body = try JSONRequestBody(request, allowedFields: Self.fields)
        body.refuseNull(["status", "email", "emailVerified"])
        var changes = AccountChanges(status: body.enumeration("status", AccountStatus.self),
                                     email: body.string("email", maxLength: 254),
                                     emailVerified: body.bool("emailVerified"))
        if body.isExplicitNull("name") {
            changes.name = .some(nil)
        } else {
            var name = PersonName()
            var given = false
            body.nested("name", allowed: Self.nameFields) { members, problem in
                given = true
                func part(_ key: String) -> String? {
                    switch members[key] {
                    case nil, .some(.null): return nil
                    case .some(.string(let text)) where text.utf8.count <= 1024: return text
                    default:
                        problem(key, "must be a string of at most 200 characters, or null")
                        return nil
                    }
                }
                name = PersonName(givenName: part("givenName"), familyName: part("familyName"),
                                  displayName: part("displayName"))
            }
            if given { changes.name = .some(name) }
        }
        body.add(changes.fieldIssues())
        try body.validate()
        return .json(try await stores.accounts.update(realmID: request.parameter("realm"), id: accountID, changes: changes,
                                                      context: context))
    }

    func delete(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        _ = try await stores.accountDeletions.delete(realmID: request.parameter("realm"),
                                                     accountID: try Self.accountID(request), by: .admin(context))
        return .noContent
    }

    /// The account id of the path; ids longer than any generated one are simply not found.
    static func accountID(_ request: HTTPRequest) throws(RealmsError) -> String {
        let id = request.parameter("account")
        guard !id.isEmpty, id.utf8.count <= maxAccountIDLength else { throw RealmsError.notFound("account") }
        return id
    }
}
