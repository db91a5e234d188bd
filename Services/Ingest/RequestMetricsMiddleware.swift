import Hummingbird

/// Counts every answered request by route and status, records its latency, and counts refusals by code.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let metrics: IngestMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.request(
                route: context.endpointPath ?? "unmatched", status: response.status.code,
                duration: ContinuousClock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.request(route: context.endpointPath ?? "unmatched", status: status, duration: ContinuousClock.now - start)
            metrics.reject(reason: (error as? IngestError)?.code ?? (status == 404 ? "not_found" : "internal"))
            if !(error is IngestError), status == 404 { throw IngestError.notFound("no such route") }
            throw error
        }
    }
}
