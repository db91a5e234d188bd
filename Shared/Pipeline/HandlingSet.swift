/// The entry ids a consumer is handling right now, shared by its reader and its handler tasks.
actor HandlingSet {
    private var ids: Set<String> = []

    /// Adds `id`; false when it is already being handled.
    func insert(_ id: String) -> Bool {
        ids.insert(id).inserted
    }

    func remove(_ id: String) {
        ids.remove(id)
    }

    var count: Int { ids.count }
}
