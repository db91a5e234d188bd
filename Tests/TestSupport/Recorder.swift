/// A shared list of values that handlers (or subscribers) append to.
package actor Recorder<Value: Sendable> {
    package private(set) var values: [Value] = []

    package init() {}

    package func append(_ value: Value) {
        values.append(value)
    }

    package var count: Int { values.count }
}
