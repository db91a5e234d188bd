/// A property a reader broke for one input.
struct FuzzFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// Throws ``FuzzFailure`` with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    guard condition else { throw FuzzFailure(message()) }
}
