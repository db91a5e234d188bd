package import Logging

/// The one logger tests hand to the code under test: it drops everything, so a test's output is its own.
/// (Processes a test starts log to files of their own.)
package let testLogger = Logger(label: "tollgate.tests", factory: { _ in SwiftLogNoOpLogHandler() })
