package sources

// QueryServer describes the Prometheus-API server a snapshot was read
// from (Snapshot.QueryServer; nil when pdtop scrapes the targets itself),
// so that a fleet with no worker can say why: the server is down, or it
// holds no SGLang worker series, or the selector excludes them.
type QueryServer struct {
	// Target is the server's name in Snapshot.Targets ("prometheus").
	Target string
	// Host is the server's address for messages (host:port), sanitised.
	Host string
	// Selector is the --selector in force as PromQL matchers,
	// "{job=\"serving\"}"; "" when none.
	Selector string
	// Metric is the worker series that count a worker
	// ("sglang:num_running_reqs").
	Metric string
	// Probed is true when the last instant round found no worker and asked
	// the server how many worker series it holds without the selector;
	// Unselected is that count (series of Metric with a current sample,
	// one per worker). Without a selector the two counts are the same
	// question, so Unselected 0 means the server has no worker series.
	Probed     bool
	Unselected int
}
