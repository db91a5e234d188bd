import Metrics
import Pipeline
import Prometheus
import Testing

/// ``MetricHandles``: one handle per label and dimensions, made once, counting into the registry's series.
@Suite struct MetricHandlesTests {
    @Test func eachLabelAndDimensionsGetOneHandleThatCountsIntoItsOwnSeries() throws {
        let registry = PrometheusCollectorRegistry()
        let handles = MetricHandles(factory: PrometheusMetricsFactory(registry: registry))
        let completed = handles.counter("tollgate_test_jobs_total", [("stream", "s"), ("outcome", "completed")])
        #expect(completed === handles.counter("tollgate_test_jobs_total", [("stream", "s"), ("outcome", "completed")]))
        #expect(completed !== handles.counter("tollgate_test_jobs_total", [("stream", "s"), ("outcome", "retried")]))
        #expect(completed !== handles.counter("tollgate_test_jobs_total", [("stream", "t"), ("outcome", "completed")]))
        // The key keeps names and values apart: ("a", "bc") is not ("ab", "c").
        #expect(handles.counter("tollgate_test_pairs_total", [("a", "bc")]) !== handles.counter("tollgate_test_pairs_total", [("ab", "c")]))

        for _ in 0..<3 { handles.counter("tollgate_test_jobs_total", [("stream", "s"), ("outcome", "completed")]).increment() }
        handles.counter("tollgate_test_jobs_total", [("stream", "s"), ("outcome", "retried")]).increment()
        handles.timer("tollgate_test_duration_seconds", [("stream", "s")]).recordNanoseconds(2_000_000)
        handles.timer("tollgate_test_duration_seconds", [("stream", "s")]).recordNanoseconds(4_000_000)

        let lines = String(decoding: registry.emitToBuffer(), as: UTF8.self).split(separator: "\n")
        #expect(lines.contains(#"tollgate_test_jobs_total{stream="s",outcome="completed"} 3"#), "\(lines)")
        #expect(lines.contains(#"tollgate_test_jobs_total{stream="s",outcome="retried"} 1"#), "\(lines)")
        #expect(lines.contains(#"tollgate_test_duration_seconds_count{stream="s"} 2"#), "\(lines)")
    }
}
