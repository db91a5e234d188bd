/// A first-in, first-out queue with O(1) amortised push and pop (an array and a moving head).
///
/// Not thread-safe: each queue belongs to one event-loop thread or sits behind a lock.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }
    var last: Element? { isEmpty ? nil : storage[storage.count - 1] }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        defer {
            storage[head] = nil
            head += 1
            if head == storage.count {
                storage.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
        }
        return storage[head]
    }

    /// Mutates the first element in place (it must exist).
    mutating func withFirst<Result>(_ body: (inout Element) -> Result) -> Result {
        body(&storage[head]!)
    }

    /// Removes and returns the first element matching `predicate`, keeping the others in order.
    mutating func remove(where predicate: (Element) -> Bool) -> Element? {
        guard let index = storage[head...].firstIndex(where: { $0.map(predicate) ?? false }) else { return nil }
        let element = storage.remove(at: index)
        if head == storage.count { _ = removeAll() }
        return element
    }

    /// Removes every element, returning them in order.
    mutating func removeAll() -> [Element] {
        let elements = storage[head...].compactMap { $0 }
        storage.removeAll(keepingCapacity: true)
        head = 0
        return elements
    }

    func contains(where predicate: (Element) -> Bool) -> Bool {
        storage[head...].contains { $0.map(predicate) ?? false }
    }
}
