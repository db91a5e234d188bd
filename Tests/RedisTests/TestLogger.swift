import Logging

/// A logger that drops everything, so test output stays readable.
let testLogger = Logger(label: "tollgate.redis.tests", factory: { _ in SwiftLogNoOpLogHandler() })
