import CSQLite

/// One SQLite connection. Owns its `sqlite3*` and closes it in `deinit`; the
/// pointer never leaves this type. Not thread-safe: the store confines each
/// connection to its own executor.
final class Connection {
    private let handle: OpaquePointer
    let path: String
    /// Transactions open now: the outermost is BEGIN … COMMIT, the ones
    /// inside it are savepoints.
    private var depth = 0
    /// Statements of `run` and `query`, prepared once: parsing the SQL again
    /// for each call was a large part of a small query's time. Bounded (SQL
    /// made from data would otherwise grow it).
    private var statements: [String: Statement] = [:]
    private static let statementCacheLimit = 256

    /// Opens (or, with `create`, creates) a database file.
    /// - Throws: `StoreError` naming the file.
    init(path: String, readOnly: Bool = false, create: Bool = true) throws(StoreError) {
        self.path = path
        var pointer: OpaquePointer?
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let result = sqlite3_open_v2(path, &pointer, flags, nil)
        guard result == SQLITE_OK, let pointer else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let pointer { sqlite3_close_v2(pointer) }
            throw StoreError(.forSQLite(result), "cannot open: \(message)", path: path, sqliteCode: result)
        }
        handle = pointer
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// The `sqlite3*` for the length of `body` (for C APIs that take two
    /// connections, such as the online backup); it must not escape.
    func withHandle<T>(_ body: (OpaquePointer) throws(StoreError) -> T) throws(StoreError) -> T {
        try body(handle)
    }

    /// The error for a failed call, with SQLite's message.
    func error(_ result: Int32, _ what: String) -> StoreError {
        StoreError(.forSQLite(result), "\(what): \(String(cString: sqlite3_errmsg(handle)))", path: path, sqliteCode: result)
    }

    /// Runs SQL statements that return no rows.
    func execute(_ sql: String) throws(StoreError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result, "cannot run \(sql.prefix(60))") }
    }

    /// A prepared statement.
    func prepare(_ sql: String) throws(StoreError) -> Statement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw error(result, "cannot prepare \(sql.prefix(60))") }
        return Statement(statement, connection: self)
    }

    /// The prepared statement for `sql`, from the cache or made now.
    private func cached(_ sql: String) throws(StoreError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        if statements.count >= Self.statementCacheLimit { statements.removeAll() }
        statements[sql] = statement
        return statement
    }

    /// Runs one statement with bindings, ignoring rows.
    func run(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ values: [SQLValue] = [], _ row: (Statement) throws(StoreError) -> T) throws(StoreError) -> [T] {
        let statement = try cached(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var result: [T] = []
        while try statement.step() { result.append(try row(statement)) }
        return result
    }

    /// The first value of the first row, if any.
    func scalar(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) -> SQLValue? {
        try query(sql, values) { $0.value(0) }.first
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if
    /// it throws. Inside another transaction it is a savepoint: rolled back
    /// alone if it throws, committed with the outer one.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        let savepoint = depth > 0 ? "s\(depth)" : nil
        let rollback = savepoint.map { "ROLLBACK TO \($0); RELEASE \($0)" } ?? "ROLLBACK"
        try execute(savepoint.map { "SAVEPOINT \($0)" } ?? "BEGIN IMMEDIATE")
        depth += 1
        let value: T
        do {
            value = try body()
        } catch {
            depth -= 1
            try? execute(rollback)
            throw error
        }
        depth -= 1
        do {
            try execute(savepoint.map { "RELEASE \($0)" } ?? "COMMIT")
        } catch {
            try? execute(rollback)
            throw error
        }
        return value
    }

    /// Whether a transaction is open.
    var isInTransaction: Bool { depth > 0 }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }
}

/// A value to bind or read.
enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    var text: String? { if case .text(let value) = self { value } else { nil } }
    var blob: [UInt8]? { if case .blob(let value) = self { value } else { nil } }
}

/// A prepared statement, finalized in `deinit`.
final class Statement {
    private let handle: OpaquePointer
    /// Unowned: the connection caches its statements, and none outlives it.
    private unowned let connection: Connection

    fileprivate init(_ handle: OpaquePointer, connection: Connection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Ends a run: the statement holds no lock or read snapshot, and its
    /// bound blobs are let go.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds values to the parameters 1, 2, … and resets the statement.
    func bind(_ values: [SQLValue]) throws(StoreError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .real(let number): result = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // With the byte count, not -1: a NUL inside a name is kept, not a cut.
                var utf8 = Array(text.utf8)
                utf8.append(0)
                result = utf8.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) {
                        st_sqlite3_bind_text_copy(handle, index, $0.baseAddress!, Int32(bytes.count - 1))
                    }
                }
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { raw in
                    st_sqlite3_bind_blob_copy(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(raw.count))
                }
            }
            guard result == SQLITE_OK else { throw connection.error(result, "cannot bind parameter \(index)") }
        }
    }

    /// Steps once: true if a row is available.
    func step() throws(StoreError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(result, "statement failed")
        }
    }

    func value(_ column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(text(column) ?? "")
        case SQLITE_BLOB: return .blob(bytes(column))
        default: return .null
        }
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL, let pointer = sqlite3_column_text(handle, column) else { return nil }
        // By the byte count: a NUL inside the text is part of it.
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func bytes(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
