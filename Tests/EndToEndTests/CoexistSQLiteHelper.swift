import CoexistSQLite

/// Small database set-ups for end-to-end tests.
enum CoexistSQLiteHelper {
    /// A valid SQLite database with one ordinary table and nothing of Core Data's.
    static func createPlainDatabase(_ path: String) throws {
        try Connection(path: path, options: OpenOptions(access: .readWriteCreate)).execute(
            "CREATE TABLE notes (body TEXT)"
        )
    }
}
