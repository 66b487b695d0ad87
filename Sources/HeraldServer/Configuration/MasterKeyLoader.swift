import Foundation
import JOSE
import Storage

/// Finds the master key: `HERALD_MASTER_KEY` when set, else the key file `herald.key` beside
/// the SQLite database, created on first start with mode 0600 (O_EXCL, so two processes
/// starting together cannot write two different keys).
enum MasterKeyLoader {
    static func load(configuration: HeraldConfiguration) throws(ConfigurationError) -> MasterKey {
        if let encoded = configuration.masterKey {
            do {
                return try MasterKey(encoded: encoded)
            } catch {
                throw ConfigurationError("HERALD_MASTER_KEY must be 32 bytes as 64 hex characters or base64url")
            }
        }
        guard case .sqlite(let databasePath) = configuration.database else {
            throw ConfigurationError("HERALD_MASTER_KEY is required when the database is not SQLite (every node needs the same key)")
        }
        let folder = URL(fileURLWithPath: databasePath).deletingLastPathComponent().path
        let keyPath = folder + "/herald.key"
        if let existing = try readKeyFile(keyPath) { return existing }
        let key = MasterKey.generate()
        let descriptor = open(keyPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if descriptor < 0 {
            if errno == EEXIST, let raced = try readKeyFile(keyPath) { return raced }
            throw ConfigurationError("cannot create the master key file \(keyPath): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array((key.encoded + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            throw ConfigurationError("cannot write the master key file \(keyPath)")
        }
        return key
    }

    private static func readKeyFile(_ path: String) throws(ConfigurationError) -> MasterKey? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("cannot read the master key file \(path)")
        }
        do {
            return try MasterKey(encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw ConfigurationError("the master key file \(path) does not hold a 32-byte key")
        }
    }
}
