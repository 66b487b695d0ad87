import Foundation
import HeraldServer
import Storage

/// `herald <command>`: serve, migrate, admin, diagnose.
enum HeraldCommandLine {
    static let usage = """
        usage: herald <command> [options]

        commands:
          serve [--host H] [--port P] [--public-url URL] [--database URL] [--database-connections N]
                [--apple-jwks-url URL] [--google-jwks-url URL] [--google-gsi-script-url URL]
                [--trusted-proxies CIDRS] [--log-level LEVEL]
                [--per-ip-connection-limit N] [--connection-timeout SECONDS]
                [--rate-limit-per-ip N/SECONDS|off] [--rate-limit-per-client N/SECONDS|off]
                [--admin-auth-failure-limit N/SECONDS|off]
                [--event-retention DAYS] [--admin-listen IP:PORT]
                                      start the server (flags override HERALD_* variables)
          migrate [--database URL]    apply database migrations and exit
          admin create-token --name N [--realm R …] [--role admin|viewer] | list-tokens
                | revoke-token --name N [--database URL]
                                      manage admin API tokens
          diagnose apple-token --token T --audience A [--audience B…] [--jwks FILE|URL]
                               [--nonce RAW] [--now UNIX_SECONDS]
                                      verify one Apple identity token and print a JSON report
          diagnose google-token --token T --client-id C [--client-id D…] [--hosted-domain D]
                                [--jwks FILE|URL] [--nonce RAW] [--now UNIX_SECONDS]
                                      the same for one Google ID token
          help                        show this text
        """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "serve":
            return await ServeCommand.run(arguments: rest)
        case "migrate":
            return await withDatabase(arguments: rest) { _, _ in 0 }
        case "admin":
            return await withDatabase(arguments: rest, passThrough: true) { database, remaining in
                await AdminTokenCommands.run(arguments: remaining, database: database)
            }
        case "diagnose":
            guard let command = [DiagnoseTokenCommand.apple, .google].first(where: { $0.name == rest.first }) else {
                printError("usage: herald diagnose apple-token --token T --audience A …\n"
                           + "       herald diagnose google-token --token T --client-id C …")
                return 2
            }
            return await command.run(arguments: Array(rest.dropFirst()))
        case "help", "--help", "-h":
            print(usage)
            return 0
        default:
            printError("herald: unknown command '\(command.prefix(64))'\n\n\(usage)")
            return 2
        }
    }

    /// Opens and migrates the configured database (`--database` or `HERALD_DATABASE`), runs
    /// `body` with it and the arguments that were not `--database`, then closes it.
    private static func withDatabase(arguments: [String], passThrough: Bool = false,
                                     _ body: (any Database, [String]) async -> Int32) async -> Int32 {
        var databaseArguments: [String] = []
        var remaining: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--database", index + 1 < arguments.count {
                databaseArguments += [argument, arguments[index + 1]]
                index += 2
            } else if argument.hasPrefix("--database=") {
                databaseArguments.append(argument)
                index += 1
            } else {
                remaining.append(argument)
                index += 1
            }
        }
        if !passThrough, let unknown = remaining.first {
            printError("herald: unknown option '\(unknown.prefix(64))'")
            return 2
        }
        do {
            let configuration = try commandConfiguration(arguments: databaseArguments,
                                                         environment: ProcessInfo.processInfo.environment)
            let database = try await HeraldApplication.openDatabase(configuration: configuration, now: { Date() })
            let code = await body(database, remaining)
            await database.close()
            return code
        } catch let error as ConfigurationError {
            printError("herald: \(error.message)")
            return 1
        } catch {
            printError("herald: cannot open the database (\(type(of: error)))")
            return 1
        }
    }
}

extension HeraldCommandLine {
    /// The configuration a one-shot command (`migrate`, `admin`) opens the database with: one
    /// PostgreSQL connection, whatever `HERALD_DATABASE_CONNECTIONS` sizes a serving node's
    /// pool at. The command runs one statement at a time, and on a server near its
    /// `max_connections` (an incident, when an operator needs `admin`) one is likelier to be had.
    static func commandConfiguration(arguments: [String], environment: [String: String]) throws -> HeraldConfiguration {
        var configuration = try HeraldConfiguration.load(arguments: arguments, environment: environment)
        configuration.databaseConnections = 1
        return configuration
    }
}

/// Writes one line to stderr.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
