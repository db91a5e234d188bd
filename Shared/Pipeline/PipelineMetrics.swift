import Metrics
import Redis

/// The runtime's metrics, with the stream (and outcome) as dimensions, recorded through the handles the consumer,
/// promoter or janitor was given.
///
/// - `tollgate_jobs_total{stream,outcome}` — outcome: completed, duplicate, retried, dead_lettered, abandoned,
///   poison, failed (the outcome could not be applied; the entry stays pending)
/// - `tollgate_retries_scheduled_total{stream}`, `tollgate_dead_letters_total{stream,cause}`
/// - `tollgate_handler_duration_seconds{stream}` (timer), `tollgate_reclaimed_total{stream}`,
///   `tollgate_retries_promoted_total{stream}`, `tollgate_stream_trimmed_total{stream}`
struct PipelineMetrics: Sendable {
    let stream: String
    let handles: MetricHandles

    func job(_ outcome: String) {
        handles.counter("tollgate_jobs_total", [("stream", stream), ("outcome", outcome)]).increment()
    }

    func retryScheduled() {
        handles.counter("tollgate_retries_scheduled_total", [("stream", stream)]).increment()
    }

    func deadLetter(cause: String) {
        handles.counter("tollgate_dead_letters_total", [("stream", stream), ("cause", cause)]).increment()
    }

    func handlerDuration(_ duration: Duration) {
        handles.timer("tollgate_handler_duration_seconds", [("stream", stream)]).recordNanoseconds(duration.milliseconds * 1_000_000)
    }

    func reclaimed(_ count: Int) {
        guard count > 0 else { return }
        handles.counter("tollgate_reclaimed_total", [("stream", stream)]).increment(by: count)
    }

    func promoted(_ count: Int) {
        guard count > 0 else { return }
        handles.counter("tollgate_retries_promoted_total", [("stream", stream)]).increment(by: count)
    }

    func trimmed(_ count: Int) {
        guard count > 0 else { return }
        handles.counter("tollgate_stream_trimmed_total", [("stream", stream)]).increment(by: count)
    }
}
