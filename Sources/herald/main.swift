import Foundation

// The top level only dispatches: every command lives in a nonisolated type, because code
// written here is main-actor isolated and C or Dispatch callbacks must not be.
let exitCode = await HeraldCommandLine.run(Array(CommandLine.arguments.dropFirst()))
exit(exitCode)
