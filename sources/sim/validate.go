package sim

import "fmt"

func (w Workload) validate() error {
	switch {
	case w.Rate < 0:
		return fmt.Errorf("sim: Workload.Rate = %v, want ≥ 0", w.Rate)
	case w.BurstEvery < 0 || w.BurstLength < 0 || w.BurstFactor < 0:
		return fmt.Errorf("sim: negative burst setting")
	case w.Documents < 1 && !w.PrivateDocuments:
		return fmt.Errorf("sim: Workload.Documents = %d, want ≥ 1 (or PrivateDocuments)", w.Documents)
	case w.DocTokens < 1:
		return fmt.Errorf("sim: Workload.DocTokens = %d, want ≥ 1", w.DocTokens)
	case w.ZipfS <= 0 && !w.PrivateDocuments:
		return fmt.Errorf("sim: Workload.ZipfS = %v, want > 0", w.ZipfS)
	case w.FollowUp < 0 || w.FollowUp > 1:
		return fmt.Errorf("sim: Workload.FollowUp = %v, want 0..1", w.FollowUp)
	case w.OutputTokens < 1 || w.OutputCap < 1:
		return fmt.Errorf("sim: Workload.OutputTokens and OutputCap must be ≥ 1")
	case w.SystemPromptTokens < 0 || w.QuestionTokens < 0 || w.DocSpread < 0 || w.OutputSpread < 0:
		return fmt.Errorf("sim: negative workload setting")
	}
	return nil
}

func (c Capacity) validate() error {
	switch {
	case c.PrefillTokensPerSec <= 0 || c.DecodeTokensPerSec <= 0:
		return fmt.Errorf("sim: prefill and decode throughput must be > 0")
	case c.PrefillChunkTokens < 1 || c.PrefillKVTokens < 1 || c.DecodeKVTokens < 1:
		return fmt.Errorf("sim: chunk size and KV pools must be ≥ 1 token")
	case c.RefContextTokens < 1 || c.MaxRunningRequests < 1:
		return fmt.Errorf("sim: RefContextTokens and MaxRunningRequests must be ≥ 1")
	case c.KVBytesPerToken <= 0 || c.LinkGBps <= 0:
		return fmt.Errorf("sim: KVBytesPerToken and LinkGBps must be > 0")
	case c.BootstrapTimeout <= 0 || c.TransferTimeout <= 0:
		return fmt.Errorf("sim: timeouts must be > 0")
	case c.Warmup < 0 || c.DecodeStepBase < 0 ||
		c.PrefillBatchOverhead < 0 || c.LinkLatency < 0 || c.BootstrapLatency < 0:
		return fmt.Errorf("sim: negative capacity setting")
	}
	return nil
}

func (r Router) validate() error {
	switch {
	case r.CacheThreshold < 0 || r.CacheThreshold > 1:
		return fmt.Errorf("sim: Router.CacheThreshold = %v, want 0..1", r.CacheThreshold)
	case r.BalanceAbsThreshold < 0 || r.BalanceRelThreshold < 1:
		return fmt.Errorf("sim: balance thresholds must be abs ≥ 0, rel ≥ 1")
	case r.TreeEvictionInterval <= 0 || r.MaxTreeTokens < 1 || r.CharsPerToken < 1 || r.BlockSize < 1:
		return fmt.Errorf("sim: router tree settings must be > 0")
	case r.MaxConcurrent < 1 || r.QueueSize < 0 || r.QueueTimeout <= 0:
		return fmt.Errorf("sim: admission settings: MaxConcurrent ≥ 1, QueueSize ≥ 0, QueueTimeout > 0")
	case r.MaxRetries < 0 || r.RetryBackoff < 0:
		return fmt.Errorf("sim: retry settings must be ≥ 0")
	case r.HealthInterval <= 0 || r.HealthFailures < 1 || r.HealthSuccesses < 1:
		return fmt.Errorf("sim: health-check settings must be > 0")
	case r.CBFailures < 1 || r.CBTimeout <= 0 || r.CBSuccesses < 1:
		return fmt.Errorf("sim: circuit-breaker settings must be > 0")
	}
	return nil
}
