import Foundation
import HeraldApple
import HeraldGoogle
import ProviderKeys

/// `herald diagnose apple-token` and `herald diagnose google-token`: argument parsing, help,
/// key source selection, report and exit code. The diagnoses themselves (`AppleTokenDiagnosis`,
/// `GoogleTokenDiagnosis`) are the providers' modules'; this is the command line around them.
/// main.swift dispatches here; tests (`heraldTests`) run it with their own standard input and outputs.
struct DiagnoseTokenCommand: Sendable {
    /// Exit statuses.
    enum ExitCode {
        static let valid: Int32 = 0
        static let rejected: Int32 = 1
        static let usage: Int32 = 2
        static let unavailable: Int32 = 3
    }

    /// A report as the command prints it.
    struct Outcome: Sendable {
        let json: String
        let exitCode: Int32
    }

    /// `apple-token`, `google-token`.
    let name: String
    /// The flag naming an accepted audience: `--audience` (Apple), `--client-id` (Google).
    let audienceFlag: String
    /// Whether `--hosted-domain` is offered (Google Workspace's `hd`).
    let acceptsHostedDomain: Bool
    /// The provider's published key set, used without `--jwks`.
    let defaultJWKS: URL
    /// "Apple's JWKS", for the one-line error.
    let keysName: String
    /// The `--help` text.
    let help: String
    /// Runs the provider's diagnosis.
    let diagnose: @Sendable (_ token: String, _ options: Options, _ keys: any SigningKeySource, _ now: Date) async -> Outcome

    static let apple = DiagnoseTokenCommand(
        name: "apple-token", audienceFlag: "--audience", acceptsHostedDomain: false,
        defaultJWKS: AppleJWKSClientConfiguration.defaultURL, keysName: "Apple's JWKS", help: appleHelp
    ) { token, options, keys, now in
        let report = await AppleTokenDiagnosis.diagnose(token: token, audiences: Set(options.audiences),
                                                        rawNonce: options.nonce, keys: keys, now: now)
        return Outcome(json: report.json(), exitCode: report.exitCode)
    }

    static let google = DiagnoseTokenCommand(
        name: "google-token", audienceFlag: "--client-id", acceptsHostedDomain: true,
        defaultJWKS: GoogleJWKS.defaultURL, keysName: "Google's JWKS", help: googleHelp
    ) { token, options, keys, now in
        let report = await GoogleTokenDiagnosis.diagnose(
            token: token, requirements: GoogleRealmRequirements(clientIDs: Set(options.audiences),
                                                                hostedDomain: options.hostedDomain),
            rawNonce: options.nonce, keys: keys, now: now)
        return Outcome(json: report.json(), exitCode: report.exitCode)
    }

    static let appleHelp = """
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

    static let googleHelp = """
        Usage: herald diagnose google-token --token T --client-id C [--client-id D ...]
                                           [--hosted-domain DOMAIN] [--jwks FILE|URL]
                                           [--nonce RAW] [--now UNIX_SECONDS]

        Verifies one Google ID token exactly as Google native login does and prints a JSON report
        in the shape of apple-token's: the decoded header and claims (never the signature), the
        checks in order, the verdict and its reason.

          --token T              the ID token; "-" reads it from standard input
          --client-id C          an accepted OAuth client id (web, Android, iOS); repeat for several
          --hosted-domain DOMAIN require this Google Workspace domain (the token's hd)
          --jwks FILE|URL        a JWKS file (offline) or URL;
                                 default https://www.googleapis.com/oauth2/v3/certs
          --nonce RAW            the nonce the app sent (Google carries it verbatim); without it, a
                                 token must have no nonce claim
          --now SECONDS          evaluate at this unix time instead of the current time
          -h, --help             this text

        The nonce is optional (as a realm with nonceRequired=false) and replay is not checked
        (reported as skipped). Google's checks stop at the first failure: the checks after it
        are reported as skipped. The claims may include the user's email: the report is for your
        terminal, not for logs.

        Exit status: 0 valid; 1 rejected (reason in the report); 2 usage error; 3 Google's JWKS
        could not be fetched and nothing cached could decide (reason "google_unavailable").
        """

    /// Parsed arguments.
    struct Options: Equatable, Sendable {
        var token: String?
        var audiences: [String] = []
        var hostedDomain: String?
        var jwks: String?
        var nonce: String?
        var now: Date?
        var help = false
    }

    /// A usage error; the message names the flag, never a value.
    struct UsageError: Error, Equatable {
        let message: String
    }

    /// Runs with the arguments after `diagnose <name>` on the process's standard input,
    /// output and error; returns the exit status.
    func run(arguments: [String]) async -> Int32 {
        await run(arguments: arguments, output: { print($0) },
                  errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
    }

    /// Runs the command. `standardInput` supplies the token for `--token -`.
    func run(arguments: [String],
             standardInput: () -> String? = { readLine(strippingNewline: true) },
             output: (String) -> Void,
             errorOutput: (String) -> Void) async -> Int32 {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            errorOutput("herald diagnose \(name): \(error.message)\nRun with --help for usage.")
            return ExitCode.usage
        }
        if options.help {
            output(help)
            return ExitCode.valid
        }
        var token = options.token ?? ""
        if token == "-" {
            guard let line = standardInput()?.trimmingCharacters(in: .whitespacesAndNewlines), !line.isEmpty else {
                errorOutput("herald diagnose \(name): --token - but standard input has no token")
                return ExitCode.usage
            }
            token = line
        }

        let keys: any SigningKeySource
        var cache: JWKSCache?
        let source = options.jwks ?? defaultJWKS.absoluteString
        if source.lowercased().hasPrefix("http://") || source.lowercased().hasPrefix("https://") {
            guard let url = URL(string: source), url.host != nil else {
                errorOutput("herald diagnose \(name): --jwks is not a valid URL")
                return ExitCode.usage
            }
            // Its cache lifetimes run on the real clock, whatever instant --now pins for the checks.
            let live = JWKSCache(configuration: JWKSClientConfiguration(url: url), now: { Date() })
            cache = live
            keys = live
        } else {
            guard let data = FileManager.default.contents(atPath: source) else {
                errorOutput("herald diagnose \(name): cannot read the JWKS file \(source)")
                return ExitCode.usage
            }
            do {
                keys = try StaticKeySet(document: Array(data))
            } catch {
                errorOutput("herald diagnose \(name): the JWKS file \(source) is not a JWKS document")
                return ExitCode.usage
            }
        }

        let outcome = await diagnose(token, options, keys, options.now ?? Date())
        output(outcome.json)
        if outcome.exitCode == ExitCode.unavailable, let cache {
            let failures = cache.metrics.fetches.filter { $0.key != .success && $0.value > 0 }.map(\.key.rawValue).sorted()
            errorOutput("herald diagnose \(name): \(keysName) could not be fetched (\(failures.joined(separator: ", ")))")
        }
        return outcome.exitCode
    }

    /// Parses `--flag value` and `--flag=value` forms.
    func parse(_ arguments: [String]) throws(UsageError) -> Options {
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
            let flags = ["--token", audienceFlag, "--jwks", "--nonce", "--now"] + (acceptsHostedDomain ? ["--hosted-domain"] : [])
            guard flags.contains(name) else {
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
            case audienceFlag:
                guard !value.isEmpty else { throw UsageError(message: "\(audienceFlag) is empty") }
                options.audiences.append(value)
            case "--hosted-domain":
                guard options.hostedDomain == nil else { throw UsageError(message: "--hosted-domain given twice") }
                guard !value.isEmpty else { throw UsageError(message: "--hosted-domain is empty") }
                options.hostedDomain = value
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
        guard !options.audiences.isEmpty else { throw UsageError(message: "at least one \(audienceFlag) is required") }
        return options
    }
}
