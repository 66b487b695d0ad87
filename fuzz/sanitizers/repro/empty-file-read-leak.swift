// Standalone reproduction (no Herald code) of the LeakSanitizer report behind
// `leak:20FoundationEssentials17readBytesFromFile` in ../lsan.supp (issue #38 item 16).
//
// On Linux, FoundationEssentials' readBytesFromFile handles a file whose fstat size is 0 (an empty
// file, or a /proc file) by malloc'ing a 4 KiB chunk and reading into it. When nothing is read it
// returns that chunk with length 0, and readDataFromFile answers `if result.length == 0 { return Data() }`
// without calling the chunk's deallocator. So every Data(contentsOf:) or String(contentsOfFile:) of an
// empty file leaks 4096 bytes (swift-foundation Sources/FoundationEssentials/Data/Data+Reading.swift,
// the `fileSize == 0` branch added for /proc files in swiftlang/swift-foundation#739).
//
//   swiftc -sanitize=address -g fuzz/sanitizers/repro/empty-file-read-leak.swift -o /tmp/empty-file-read-leak
//   /tmp/empty-file-read-leak string      # 10 × String(contentsOfFile:) of an empty file: exit 1 and
//
//     Direct leak of 40960 byte(s) in 10 object(s) allocated from:
//         #0 malloc asan_malloc_linux.cpp:67:3
//         #1 $s20FoundationEssentials17readBytesFromFile4path14reportProgress9maxLength7options16attributesToRead0M0AA0oD6ResultVAA9PathOrURLO_SbSiSgAA4DataV14ReadingOptionsVSaySSGSDySSAOGztKFTf4ndnnnn_n
//         #2 $s20FoundationEssentials16readDataFromFile4path14reportProgress9maxLength7optionsAA0D0VAA9PathOrURLO_SbSiSgAH14ReadingOptionsVtKFTf4ndnn_n
//         #3 $sSS20FoundationEssentialsE14contentsOfFile8encodingS2Sh_SSAAE8EncodingVtKcfC (libFoundationEssentials.so)
//         #4 $s4main12readTenTimes… empty-file-read-leak.swift:40
//     SUMMARY: AddressSanitizer: 40960 byte(s) leaked in 10 allocation(s).
//
//   This is the same 40,960 bytes in 10 allocations, with the same frames #0-#3, that the AdminTokenCLITests
//   ASan run reports (Swift 6.3.1-RELEASE, x86_64 Linux; there, frame #4 is AdminTokenCLITests.swift:32/33,
//   reading a child's empty stdout or stderr file). Other modes:
//     data      Data(contentsOf:) of the empty file: the same leak, frames #0-#2
//     task      the reads from an async Task, as the tests make them: the same leak
//     nonempty  a 64 KiB file: no report, exit 0
//     realleak  leaks a Data read from the 64 KiB file on purpose. With the suppression on, LeakSanitizer still
//               reports the Holder and the Data's __DataStorage (allocated in readDataFromFile, not
//               readBytesFromFile) and exits 1; only the indirect 64 KiB buffers are suppressed.
//   With LSAN_OPTIONS=suppressions=$PWD/fuzz/sanitizers/lsan.supp, `string`, `data` and `task` exit 0
//   ("Suppressions used: 10 40960 20FoundationEssentials17readBytesFromFile" with print_suppressions=1).
//   The suppression matches a function name, so frames must be symbolized: LeakSanitizer needs an
//   llvm-symbolizer (the toolchain has /opt/swift/usr/bin/llvm-symbolizer; ASAN_SYMBOLIZER_PATH names it).
import Foundation

/// Keeps a Data alive; `realleak` leaks these on purpose.
final class Holder {
    let data: Data
    init(_ data: Data) { self.data = data }
}

func readTenTimes(_ mode: String, empty: String, nonEmpty: String) async throws {
    for _ in 0..<10 {
        switch mode {
        case "string":
            let text = try String(contentsOfFile: empty, encoding: .utf8)
            precondition(text.isEmpty)
        case "data":
            let data = try Data(contentsOf: URL(fileURLWithPath: empty))
            precondition(data.isEmpty)
        case "task":
            let text = try await Task { try String(contentsOfFile: empty, encoding: .utf8) }.value
            precondition(text.isEmpty)
        case "nonempty":
            let text = try String(contentsOfFile: nonEmpty, encoding: .utf8)
            precondition(text.utf8.count == 65536)
        case "realleak":
            _ = Unmanaged.passRetained(Holder(try Data(contentsOf: URL(fileURLWithPath: nonEmpty))))
        default:
            fatalError("mode: string | data | task | nonempty | realleak")
        }
    }
}

/// Everything in a function: a top-level `let` of a heap String is itself reported as a leak under async top-level code.
func run() async throws {
    let folder = NSTemporaryDirectory() + "empty-file-read-leak-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let empty = folder + "/empty", nonEmpty = folder + "/non-empty"
    precondition(FileManager.default.createFile(atPath: empty, contents: Data()))
    precondition(FileManager.default.createFile(atPath: nonEmpty, contents: Data(repeating: UInt8(ascii: "x"), count: 65536)))
    let mode = CommandLine.arguments.dropFirst().first ?? "string"
    try await readTenTimes(mode, empty: empty, nonEmpty: nonEmpty)
    print("\(mode): 10 reads done")
}

try await run()
