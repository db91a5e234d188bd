import Core

/// What stops an export, with a stable code (docs/EXPORT.md).
package enum ExportError: TollgateError, Sendable, Equatable {
    /// The database holds a migration newer than this build's (`export_schema_too_new`).
    case schemaTooNew(version: Int, known: Int)
    /// An events stream entry is not an event this exporter reads (`export_bad_event`): dead-lettered, never guessed.
    case badEvent(String)

    package var code: String {
        switch self {
        case .schemaTooNew: "export_schema_too_new"
        case .badEvent: "export_bad_event"
        }
    }

    package var message: String {
        switch self {
        case .schemaTooNew(let version, let known):
            "the database has export migration \(version); this build knows up to \(known): run a newer exporter"
        case .badEvent(let what): "not an exportable event: \(what)"
        }
    }
}
