import Storage

/// Every module's migrations, in dependency order (a module's tables may reference the
/// tables of modules listed before it).
enum HeraldMigrations {
    static var all: [Migration] {
        []
    }
}
