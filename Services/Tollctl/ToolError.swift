import Core

/// An error of tollctl itself (an unreadable file, an argument it cannot use, nothing found), reported like
/// every other: `tollctl: error: <code>: <message>`, exit status 1.
struct ToolError: TollgateError, Sendable {
    var code: String
    var message: String

    init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
