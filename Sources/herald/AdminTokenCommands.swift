import Foundation
import Realms
import Storage

/// `herald admin create-token --name N [--realm R …] [--role admin|viewer] | list-tokens |
/// revoke-token --name N`: manages the named admin API tokens. A created token is printed
/// once, on stdout; it is stored hashed. Without `--realm` a token reaches every realm; without
/// `--role` it is an admin (reads and writes).
enum AdminTokenCommands {
    static let usage = """
        usage: herald admin create-token --name NAME [--realm REALM ...] [--role admin|viewer] [--reason TEXT]
               herald admin list-tokens
               herald admin revoke-token --name NAME [--reason TEXT]
        """

    /// Runs one admin command; `arguments` may start with "admin". Exit codes: 0 done,
    /// 1 refused or failed, 2 usage error.
    static func run(arguments: [String], database: any Database) async -> Int32 {
        var arguments = arguments
        if arguments.first == "admin" { arguments.removeFirst() }
        guard let command = arguments.first else { return usageError("missing command") }
        guard let (options, realms) = parseOptions(Array(arguments.dropFirst())) else { return usageError("unreadable options") }
        if command != "create-token", !realms.isEmpty { return usageError("--realm is an option of create-token only") }
        let store = AdminTokenStore(database: database, now: { Date() })
        do {
            try await database.migrate(RealmsSchema.migrations)
            let context = try ChangeContext(actor: "cli", reason: options["reason"])
            switch command {
            case "create-token":
                guard let name = options["name"], options.keys.allSatisfy({ ["name", "reason", "role"].contains($0) }) else {
                    return usageError("create-token needs --name (and takes only --realm, --role, --reason)")
                }
                var role = AdminRole.admin
                if let text = options["role"] {
                    guard let parsed = AdminRole(rawValue: text) else { return usageError("--role must be admin or viewer") }
                    role = parsed
                }
                let scope: AdminScope = realms.isEmpty ? .allRealms : .realms(Set(realms))
                let token = try await store.create(name: name, role: role, scope: scope, context: context)
                print(token)
                printError("Created admin token \"\(name)\" (\(role.rawValue) of \(describe(scope))). It is shown only once: store it now.")
                return 0
            case "list-tokens":
                guard options.isEmpty else { return usageError("list-tokens takes no options") }
                let formatter = ISO8601DateFormatter()
                for token in try await store.list() {
                    let created = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(token.createdAt)))
                    print("\(token.name)\t\(created)\t\(token.role.rawValue)\t\(describe(token.scope))")
                }
                return 0
            case "revoke-token":
                guard let name = options["name"], options.keys.allSatisfy({ ["name", "reason"].contains($0) }) else {
                    return usageError("revoke-token needs --name")
                }
                try await store.revoke(name: name, context: context)
                printError("Revoked admin token \"\(name)\".")
                return 0
            default:
                return usageError("unknown command \(command)")
            }
        } catch let error as RealmsError {
            let fields = error.fieldIssues.map { "\($0.field) \($0.reason)" }.joined(separator: "; ")
            printError("herald admin: \(fields.isEmpty ? error.message : fields)")
            return error.code == .invalidInput ? 2 : 1
        } catch {
            printError("herald admin: the database could not be used (\(error))")
            return 1
        }
    }

    /// What a scope reaches, for humans: "all realms" or the realm ids, comma-separated.
    static func describe(_ scope: AdminScope) -> String {
        scope.sortedRealmIDs.map { "realms " + $0.joined(separator: ",") } ?? "all realms"
    }

    /// `--key value` and `--key=value` pairs, and the values of `--realm` (the one option that
    /// may repeat) in order; nil when an option is malformed or another option repeats.
    static func parseOptions(_ arguments: [String]) -> (options: [String: String], realms: [String])? {
        var options: [String: String] = [:]
        var realms: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--"), argument.count > 2 else { return nil }
            let body = argument.dropFirst(2)
            let key: String
            let value: String
            if let equals = body.firstIndex(of: "=") {
                key = String(body[..<equals])
                value = String(body[body.index(after: equals)...])
            } else {
                guard index + 1 < arguments.count else { return nil }
                key = String(body)
                value = arguments[index + 1]
                index += 1
            }
            if key == "realm" {
                realms.append(value)
            } else {
                guard options[key] == nil else { return nil }
                options[key] = value
            }
            index += 1
        }
        return (options, realms)
    }

    private static func usageError(_ message: String) -> Int32 {
        printError("herald admin: \(message)\n\(usage)")
        return 2
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
