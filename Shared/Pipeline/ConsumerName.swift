import Foundation

/// Consumer names unique per replica, so that two replicas never share a pending-entries list.
public enum ConsumerName {
    /// `<hostname>-<pid>-<8 random hex digits>`, e.g. `verifier-7f9c-4242-1a2b3c4d`.
    public static func unique() -> String {
        let host = ProcessInfo.processInfo.hostName
            .split(separator: ".").first.map(String.init) ?? "host"
        let pid = ProcessInfo.processInfo.processIdentifier
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        return "\(host.isEmpty ? "host" : host)-\(pid)-\(random)"
    }
}
