import Foundation

/// The one way a Tollgate executable stops on an error it cannot go on from (a bad setting, Redis not there at
/// startup): one line on standard error, `<tool>: error: <code>: <message>`, and exit status 1.
package enum Fatal {
    /// The line ``exit(tool:error:)`` writes, without the newline. An error that is not a ``TollgateError``
    /// gets the code `unexpected`.
    package static func line(tool: String, error: any Error) -> String {
        let text: String
        if let error = error as? any TollgateError {
            text = "\(error.code): \(error.message)"
        } else {
            text = "unexpected: \(error)"
        }
        // One line, whatever the message holds.
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return "\(tool): error: \(flat)"
    }

    /// Writes ``line(tool:error:)`` to standard error and exits with status 1.
    package static func exit(tool: String, error: any Error) -> Never {
        FileHandle.standardError.write(Data((line(tool: tool, error: error) + "\n").utf8))
        Foundation.exit(1)
    }
}
