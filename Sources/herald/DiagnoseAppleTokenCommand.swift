import Foundation
import HeraldApple

/// `herald diagnose apple-token`: argument parsing, help, key source selection, report and
/// exit code. The diagnosis itself (`AppleTokenDiagnosis`, its report and JSON) is HeraldApple's;
/// this is the command line around it. main.swift dispatches here; tests (`heraldTests`) run it
/// with their own standard input and outputs.
enum DiagnoseAppleTokenCommand {
    /// Exit statuses.
    enum ExitCode {
        static let valid: Int32 = 0
        static let rejected: Int32 = 1
        static let usage: Int32 = 2
        static let unavailable: Int32 = 3
    }

    /// The `--help` text.
    static let help = """
        Usage: herald diagnose apple-token --token T --audience A [--audience B ...]
                                          [--jwks FILE|URL] [--nonce RAW] [--now UNIX_SECONDS]

        Verifies one Apple identity token exactly as native login does and prints a JSON report:
        the decoded header and claims (never the signature), every check with its outcome, and
        the verdict, keys sorted: {"checks":[{"detail","name","passed"},...],"claims":{...},
        "header":{...},"reason":null|"<reason>","verdict":"valid"|"rejected"}.

          --token T        the identity token; "-" reads it from standard input (keeps it out of ps)
          --audience A     an accepted audience (Services ID or Bundle ID); repeat for several
          --jwks FILE|URL  a JWKS file (offline) or URL; default https://appleid.apple.com/auth/keys
          --nonce RAW      the raw nonce the app sent; without it, a token must have no nonce claim
          --now SECONDS    evaluate at this unix time (whole seconds, 0 to 253402300799)
                           instead of the current time
          -h, --help       this text

        Diagnosis treats the nonce as optional (as a realm with nonceRequired=false) and does not
        check replay (reported as skipped). Checks after the first failure are still evaluated
        where possible; the verdict's reason is always the first failure in contract order.
        The claims may include the user's email: the report is for your terminal, not for logs.

        Exit status: 0 valid; 1 rejected (reason in the report); 2 usage error (unknown flag,
        missing --token/--audience, unreadable JWKS file, bad --now); 3 Apple's JWKS could not be
        fetched and nothing cached could decide (reason "apple_unavailable").
        """

    /// Parsed arguments.
    struct Options: Equatable {
        var token: String?
        var audiences: [String] = []
        var jwks: String?
        var nonce: String?
        var now: Date?
        var help = false
    }

    /// A usage error; the message names the flag, never a value.
    struct UsageError: Error, Equatable {
        let message: String
    }

    /// Runs with the arguments after `diagnose apple-token` on the process's standard input,
    /// output and error; returns the exit status.
    static func run(arguments: [String]) async -> Int32 {
        await run(arguments: arguments, output: { print($0) },
                  errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
    }

    /// Runs the command. `standardInput` supplies the token for `--token -`.
    static func run(arguments: [String],
                    standardInput: () -> String? = { readLine(strippingNewline: true) },
                    output: (String) -> Void,
                    errorOutput: (String) -> Void) async -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            errorOutput("herald diagnose apple-token: \(error.message)\nRun with --help for usage.")
            return ExitCode.usage
        }
        if options.help {
            output(help)
            return ExitCode.valid
        }
        var token = options.token ?? ""
        if token == "-" {
            guard let line = standardInput()?.trimmingCharacters(in: .whitespacesAndNewlines), !line.isEmpty else {
                errorOutput("herald diagnose apple-token: --token - but standard input has no token")
                return ExitCode.usage
            }
            token = line
        }

        let keys: any AppleSigningKeySource
        var cache: AppleJWKSCache?
        let source = options.jwks ?? AppleJWKSClientConfiguration.defaultURL.absoluteString
        if source.lowercased().hasPrefix("http://") || source.lowercased().hasPrefix("https://") {
            guard let url = URL(string: source), url.host != nil else {
                errorOutput("herald diagnose apple-token: --jwks is not a valid URL")
                return ExitCode.usage
            }
            // Its cache lifetimes run on the real clock, whatever instant --now pins for the checks.
            let live = AppleJWKSCache(configuration: AppleJWKSClientConfiguration(url: url), now: { Date() })
            cache = live
            keys = live
        } else {
            guard let data = FileManager.default.contents(atPath: source) else {
                errorOutput("herald diagnose apple-token: cannot read the JWKS file \(source)")
                return ExitCode.usage
            }
            do {
                keys = try AppleStaticKeySet(document: Array(data))
            } catch {
                errorOutput("herald diagnose apple-token: the JWKS file \(source) is not a JWKS document")
                return ExitCode.usage
            }
        }

        let report = await AppleTokenDiagnosis.diagnose(
            token: token, audiences: Set(options.audiences), rawNonce: options.nonce,
            keys: keys, now: options.now ?? Date())
        output(report.json())
        if case .unavailable = report.result, let cache {
            let failures = cache.metrics.fetches.filter { $0.key != .success && $0.value > 0 }.map(\.key.rawValue).sorted()
            errorOutput("herald diagnose apple-token: Apple's JWKS could not be fetched (\(failures.joined(separator: ", ")))")
        }
        return report.exitCode
    }

    /// Parses `--flag value` and `--flag=value` forms.
    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                options.help = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard ["--token", "--audience", "--jwks", "--nonce", "--now"].contains(name) else {
                throw UsageError(message: argument.hasPrefix("-")
                    ? "unknown option \(AppleTokenDiagnosis.quoted(name))" : "unexpected argument")
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError(message: "\(name) needs a value") }
                value = arguments[index]
                index += 1
            }
            switch name {
            case "--token":
                guard options.token == nil else { throw UsageError(message: "--token given twice") }
                guard !value.isEmpty else { throw UsageError(message: "--token is empty") }
                options.token = value
            case "--audience":
                guard !value.isEmpty else { throw UsageError(message: "--audience is empty") }
                options.audiences.append(value)
            case "--jwks":
                guard options.jwks == nil else { throw UsageError(message: "--jwks given twice") }
                guard !value.isEmpty else { throw UsageError(message: "--jwks is empty") }
                options.jwks = value
            case "--nonce":
                guard options.nonce == nil else { throw UsageError(message: "--nonce given twice") }
                options.nonce = value
            default: // --now
                guard options.now == nil else { throw UsageError(message: "--now given twice") }
                // The same span claim times may name, in whole seconds: an evaluation time
                // past year 9999 (or a fraction) is a typo, not a question worth answering.
                let latest = AppleTokenDiagnosis.latestEvaluationTime
                guard value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                      let seconds = Int64(value), (0...latest).contains(seconds) else {
                    throw UsageError(message: "--now must be whole unix seconds from 0 to \(latest)")
                }
                options.now = Date(timeIntervalSince1970: Double(seconds))
            }
        }
        if options.help { return options }
        guard options.token != nil else { throw UsageError(message: "--token is required") }
        guard !options.audiences.isEmpty else { throw UsageError(message: "at least one --audience is required") }
        return options
    }
}
