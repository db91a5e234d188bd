/// The id of a project (docs/PROJECTS.md): a group of apps that share customers, with its own user space, ledger,
/// catalog and user-token secret. 1–32 bytes of `a-z`, `0-9` and `-`.
///
/// The project named `default` is the one a deployment without projects has (`{"apps": […]}`, or the one-app
/// variables): its Redis keys are today's names, and jobs, events and answers leave its id out. Every other project's
/// ledger keys carry the id after the prefix (`tg:shop2:{u:alice}:account`), outside the hash tag, so each user's keys
/// stay in the slot they have today.
package struct ProjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    package let rawValue: String

    /// The project of a deployment without projects.
    package static let `default` = ProjectID(unchecked: "default")
    package static let maxBytes = 32

    /// The id, or nil when `text` is not 1–32 of `a-z`, `0-9`, `-`.
    package init?(_ text: String) {
        guard Self.isValid(text) else { return nil }
        rawValue = text
    }

    private init(unchecked text: String) { rawValue = text }

    /// The project a job's, event's or entry's `project` field names: absent is the default project; nil when the
    /// field holds no valid id.
    package init?(field: String?) {
        guard let field else {
            self = .default
            return
        }
        self.init(field)
    }

    package static func isValid(_ text: String) -> Bool {
        (1...maxBytes).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-")
            }
    }

    package var isDefault: Bool { rawValue == Self.default.rawValue }

    /// What a job, event, stream entry or answer writes in its `project` field: nil for the default project (whose
    /// records stay as they were), the id otherwise.
    package var label: String? { isDefault ? nil : rawValue }

    package var description: String { rawValue }

    package static func < (lhs: ProjectID, rhs: ProjectID) -> Bool { lhs.rawValue < rhs.rawValue }
}
