package ui

import (
	"context"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/pdtop/pdtop/sources"
)

// fakeBackend has one slow job that blocks until released and one fast job.
type fakeBackend struct {
	mu      sync.Mutex
	release chan struct{}
	runs    map[string]int
	busy    map[string]int
}

func (f *fakeBackend) Round() []sources.Job {
	return []sources.Job{
		{Key: "slow", Run: func(ctx context.Context) {
			select {
			case <-f.release:
			case <-ctx.Done():
			}
			f.count("slow")
		}},
		{Key: "fast", Run: func(context.Context) { f.count("fast") }},
	}
}
func (f *fakeBackend) count(k string) { f.mu.Lock(); f.runs[k]++; f.mu.Unlock() }
func (f *fakeBackend) Busy(k string)  { f.mu.Lock(); f.busy[k]++; f.mu.Unlock() }
func (f *fakeBackend) Now() time.Time { return start }
func (f *fakeBackend) Snapshot(time.Duration) *sources.Snapshot {
	return &sources.Snapshot{Time: start}
}

// runCmd executes a command tree the way bubbletea would, returning the
// leaf messages; each leaf runs in its own goroutine.
func runCmd(cmd tea.Cmd) <-chan tea.Msg {
	out := make(chan tea.Msg, 64)
	var wg sync.WaitGroup
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			out <- msg
		}()
	}
	run(cmd)
	go func() { wg.Wait(); close(out) }()
	return out
}

// TestSlowJobIsSkippedNotQueuedAndDoesNotDelayOthers checks the refresh
// rules: a job still running at the next tick is skipped (the backend is
// told it is busy), and the other jobs of that tick run regardless.
func TestSlowJobIsSkippedNotQueuedAndDoesNotDelayOthers(t *testing.T) {
	f := &fakeBackend{release: make(chan struct{}), runs: map[string]int{}, busy: map[string]int{}}
	m := New(Config{Backend: f, Interval: time.Hour, Timeout: time.Minute})

	first := m.round() // both jobs start
	done := runCmd(first)
	if msg := <-done; msg != (jobDoneMsg{key: "fast"}) {
		t.Fatalf("first message = %#v, want the fast job", msg)
	}
	m.Update(jobDoneMsg{key: "fast"})

	// Next tick while "slow" is still running: it must be skipped.
	second := runCmd(m.round())
	if msg := <-second; msg != (jobDoneMsg{key: "fast"}) {
		t.Fatalf("second round: %#v, want the fast job to run again", msg)
	}
	if _, more := <-second; more {
		t.Fatal("second round queued the slow job")
	}
	f.mu.Lock()
	busy, fast := f.busy["slow"], f.runs["fast"]
	f.mu.Unlock()
	if busy != 1 || fast != 2 {
		t.Fatalf("busy[slow]=%d runs[fast]=%d, want 1 and 2", busy, fast)
	}
	close(f.release)
	if msg := <-done; msg != (jobDoneMsg{key: "slow"}) {
		t.Fatalf("slow job finished with %#v", msg)
	}
}
