import Foundation
import HeraldApple

/// `herald diagnose apple-token …`: see `AppleTokenDiagnosisCommand.help`. main.swift dispatches here.
enum DiagnoseAppleTokenCommand {
    /// Runs with the arguments after `diagnose apple-token`; returns the exit status.
    static func run(arguments: [String]) async -> Int32 {
        await AppleTokenDiagnosisCommand.run(
            arguments: arguments,
            output: { print($0) },
            errorOutput: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
    }
}
