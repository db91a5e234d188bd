import AppStore
import Foundation

/// One active fault and how often it has been served.
struct FaultRule: Sendable, Encodable {
    var id: Int
    var target: FaultTarget
    var status: Int?
    var delayMs: Int?
    var times: Int?
    /// Calls left; `nil` when unlimited.
    var remaining: Int?
    var rate: Double?
    var retryAfter: Int
    var environment: String?
    /// `api`: Apple's `errorCode` in the error body.
    var errorCode: Int?
    /// Calls the fault was applied to.
    var served: Int = 0

    init(id: Int, request: FaultRequest) throws(SimError) {
        guard let target = FaultTarget(rawValue: request.target) else {
            throw .invalid("target must be verifyReceipt, api or notifications")
        }
        if let status = request.status {
            let appleStatus = target == .verifyReceipt && (21000...21199).contains(status)
            guard appleStatus || (400...599).contains(status) else {
                throw .invalid(
                    target == .verifyReceipt
                        ? "status must be an Apple status 21000-21199 or an HTTP status 400-599"
                        : "status must be an HTTP status 400-599")
            }
        }
        if let delay = request.delayMs, !(0...120_000).contains(delay) {
            throw .invalid("delayMs must be between 0 and 120000")
        }
        if target != .notifications, request.status == nil, request.delayMs == nil {
            throw .invalid("a fault needs status or delayMs")
        }
        if let times = request.times, !(1...1_000_000).contains(times) { throw .invalid("times must be between 1 and 1000000") }
        if let rate = request.rate, !(rate > 0 && rate <= 1) { throw .invalid("rate must be in (0, 1]") }
        let retryAfter = request.retryAfter ?? 1
        guard (0...86_400).contains(retryAfter) else { throw .invalid("retryAfter must be between 0 and 86400 seconds") }
        self.id = id
        self.target = target
        self.status = request.status
        self.delayMs = request.delayMs
        self.times = request.times
        self.remaining = request.times
        self.rate = request.rate
        self.retryAfter = retryAfter
        if let errorCode = request.errorCode {
            guard target == .api, (1_000_000...9_999_999).contains(errorCode) else {
                throw .invalid("errorCode applies to api faults and has 7 digits")
            }
        }
        self.errorCode = request.errorCode
        if let raw = request.environment {
            self.environment = try SimEnvironment.parse(raw).rawValue
        } else {
            self.environment = nil
        }
    }
}
