import AppStore
import Foundation
import Hummingbird

/// Apple's legacy `verifyReceipt`: `POST /verifyReceipt` (production) and `POST /sandbox/verifyReceipt`.
/// Kept cheap: one lock for faults and counters, one for the pre-encoded answer; no signing.
struct VerifyReceiptRoutes: Sendable {
    let store: SimStore
    let faults: FaultInjector

    private static let notPost = SimStore.statusBody(21000)

    func register(on router: Router<BasicRequestContext>) {
        for (path, environment) in [("/verifyReceipt", AppStoreEnvironment.production), ("/sandbox/verifyReceipt", .sandbox)] {
            let counter = environment == .sandbox ? "verifyReceipt.sandbox" : "verifyReceipt.production"
            router.post(RouterPath(path)) { request, _ in
                await answer(request, environment: environment, counter: counter)
            }
            router.get(RouterPath(path)) { _, _ in
                Self.json(Self.notPost)
            }
        }
    }

    private func answer(_ request: Request, environment: AppStoreEnvironment, counter: String) async -> Response {
        if let fault = faults.decide(.verifyReceipt, environment: environment, counter: counter) {
            if let delay = fault.delay { try? await Task.sleep(for: delay) }
            if let status = fault.status {
                if (21000...21199).contains(status) { return Self.json(SimStore.statusBody(status)) }
                var response = Self.json(ByteBuffer(string: "{}"), status: HTTPResponse.Status(code: status))
                if status == 429 { response.headers[.retryAfter] = String(fault.retryAfter) }
                return response
            }
        }
        guard let body = try? await request.body.collect(upTo: 2 << 20) else {
            return Self.json(SimStore.statusBody(21002))
        }
        return Self.json(await store.verifyReceipt(body: body, endpoint: environment))
    }

    private static func json(_ buffer: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
    }
}
