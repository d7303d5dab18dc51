package record

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pdtop/pdtop/sources"
)

var t0 = time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)

// sample writes a small recording: a target list, scrapes (one failed),
// a skipped tick, flushed into several members.
func sample(t *testing.T) ([]byte, []Record) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{Interval: time.Second, Created: t0, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("../schema/testdata/worker_2026_prefill.prom")
	if err != nil {
		t.Fatal(err)
	}
	tg := []sources.Target{
		{ID: "http://p0:30001/metrics", URL: "http://p0:30001/metrics", Name: "p0", Role: sources.RolePrefill, Origin: sources.OriginFlag},
		{ID: "http://gw:29000/metrics", URL: "http://gw:29000/metrics", Name: "gw", Role: sources.RoleGateway, Origin: sources.OriginFlag},
	}
	var want []Record
	w.Targets(t0, tg)
	want = append(want, Record{Kind: KindTargets, Time: t0})
	for i := 0; i < 6; i++ {
		at := t0.Add(time.Duration(i+1) * time.Second)
		res := sources.ScrapeResult{TargetID: tg[0].ID, Time: at, Duration: 3 * time.Millisecond, BytesWire: 900, BytesBody: int64(len(body)),
			Raw: &sources.RawBody{Body: body, Warnings: []string{"non-compliant Content-Type"}}}
		w.Result(tg[0], res)
		want = append(want, Record{Kind: KindScrape, Time: at, Body: body})
		fail := sources.ScrapeResult{TargetID: tg[1].ID, Time: at, Err: &sources.ScrapeError{Class: sources.ErrRefused, Message: "connection refused"}}
		w.Result(tg[1], fail)
		want = append(want, Record{Kind: KindScrape, Time: at})
		if i == 3 {
			w.Skipped(tg[0].ID, at)
			want = append(want, Record{Kind: KindSkipped, Time: at})
		}
		if i%2 == 1 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A worker read through its gateway's re-export: no body of its own.
	at := t0.Add(7 * time.Second)
	w.Result(tg[0], sources.ScrapeResult{TargetID: tg[0].ID, Time: at, Via: "gw /engine_metrics",
		DirectErr: &sources.ScrapeError{Class: sources.ErrRefused, Message: "refused"},
		Obs:       &sources.Observation{Engine: "sglang", Points: []sources.Point{{Signal: sources.SigRunning, Value: math.NaN()}}}})
	want = append(want, Record{Kind: KindObservation, Time: at})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), want
}

func readAll(t *testing.T, data []byte) ([]Record, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

func TestRoundTrip(t *testing.T) {
	data, want := sample(t)
	got, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Kind != want[i].Kind || !got[i].Time.Equal(want[i].Time) || !bytes.Equal(got[i].Body, want[i].Body) {
			t.Fatalf("record %d: %v %v (%d bytes), want %v %v", i, got[i].Kind, got[i].Time, len(got[i].Body), want[i].Kind, want[i].Time)
		}
	}
	tg := got[0].Targets
	if len(tg) != 2 || tg[0].Name != "p0" || tg[0].Role != sources.RolePrefill || tg[1].Role != sources.RoleGateway || tg[0].URL != "" ||
		tg[0].Key() != "p0:30001" {
		t.Errorf("targets %+v", tg)
	}
	s := got[1].Result
	if s.TargetID != "http://p0:30001/metrics" || s.Duration != 3*time.Millisecond || s.BytesWire != 900 || s.Err != nil ||
		len(got[1].Warnings) != 1 {
		t.Errorf("scrape %+v %v", s, got[1].Warnings)
	}
	f := got[2].Result
	if f.Err == nil || f.Err.Class != sources.ErrRefused || f.Err.Message != "connection refused" || len(got[2].Body) != 0 {
		t.Errorf("failed scrape %+v", f)
	}
	if !got[9].Result.Skipped {
		t.Errorf("record 9 should be the skipped tick: %+v", got[9])
	}
	o := got[len(got)-1]
	if o.Kind != KindObservation || o.Result.Via != "gw /engine_metrics" || o.Result.DirectErr == nil || o.Result.Obs == nil ||
		len(o.Result.Obs.Points) != 1 || !math.IsNaN(o.Result.Obs.Points[0].Value) {
		t.Errorf("re-exported observation: %+v", o.Result)
	}
	// The file is plain gzip: any tool reads it whole.
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if all, err := io.ReadAll(zr); err != nil || !bytes.Contains(all, []byte("sglang:num_running_reqs")) {
		t.Errorf("zcat: %v", err)
	}
}

// TestSeekByMember restarts reading at a later member and gets the same
// records from there.
func TestSeekByMember(t *testing.T) {
	data, _ := sample(t)
	all, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	var hdr Header
	if r, err := NewReader(bytes.NewReader(data)); err == nil {
		hdr = r.Header()
	}
	if hdr.Version != Version || hdr.Interval != time.Second || !hdr.Created.Equal(t0) {
		t.Fatalf("header %+v", hdr)
	}
	i := len(all) - 5
	off := all[i].Member
	if off == 0 || all[i-1].Member == off && all[0].Member == off {
		t.Fatalf("members not distinct: %d", off)
	}
	for i > 0 && all[i-1].Member == off {
		i--
	}
	r, err := NewReaderAt(bytes.NewReader(data[off:]), off, hdr)
	if err != nil {
		t.Fatal(err)
	}
	for ; i < len(all); i++ {
		rec, err := r.Next()
		if err != nil || rec.Kind != all[i].Kind || !rec.Time.Equal(all[i].Time) || rec.Member != off && rec.Member < off {
			t.Fatalf("record %d after seek: %+v %v", i, rec.Kind, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}

// TestTruncatedAndCorrupt: a file cut anywhere, or with a byte flipped,
// reads up to the damage and says where it stopped; no record after it is
// returned and no record before it is lost.
func TestTruncatedAndCorrupt(t *testing.T) {
	data, want := sample(t)
	all, _ := readAll(t, data)
	headerEnd := int(all[0].Member) // the header is alone in the first member
	if _, err := NewReader(bytes.NewReader(data[:headerEnd/2])); err == nil {
		t.Errorf("a file cut inside its header read as a recording")
	}
	for cut := len(data) - 1; cut > headerEnd; cut -= 97 {
		got, err := readAll(t, data[:cut])
		var d *DamageError
		if err == nil || !errors.As(err, &d) {
			// A cut exactly between members is a clean, shorter file.
			if err == nil && len(got) < len(want) {
				continue
			}
			t.Fatalf("cut at %d: %v (%d records)", cut, err, len(got))
		}
		if d.Records < len(got) || d.Offset > int64(cut) || !strings.Contains(d.Error(), "byte") {
			t.Fatalf("cut at %d: %+v after %d records", cut, d, len(got))
		}
		for i := range got {
			if got[i].Kind != want[i].Kind || !got[i].Time.Equal(want[i].Time) {
				t.Fatalf("cut at %d: record %d differs", cut, i)
			}
		}
	}
	// One flipped byte in the middle.
	bad := append([]byte(nil), data...)
	bad[len(bad)/2] ^= 0x55
	got, err := readAll(t, bad)
	var d *DamageError
	if !errors.As(err, &d) || len(got) >= len(want) {
		t.Fatalf("corrupt byte: %v after %d records", err, len(got))
	}
	for i := range got {
		if !bytes.Equal(got[i].Body, want[i].Body) {
			t.Fatalf("a record before the damage came back wrong: %d", i)
		}
	}
}

func TestNotARecording(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":     nil,
		"text":      []byte("# HELP x\nx 1\n"),
		"gzip text": gz([]byte("hello world, not records")),
	} {
		if _, err := NewReader(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "not a pdtop recording") && !strings.Contains(err.Error(), "empty file") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A newer format version is refused with advice.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	w := &Writer{gz: zw}
	w.append(KindHeader, []byte(`{"format":"pdtop-recording","version":9}`), nil)
	zw.Close()
	if _, err := NewReader(&buf); err == nil || !strings.Contains(err.Error(), "upgrade pdtop") {
		t.Errorf("newer version: %v", err)
	}
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestSecretsNeverWritten: IDs with userinfo, query tokens or fragments
// are reduced to scheme://host:port/path; URLs are never written.
func TestSecretsNeverWritten(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw := "http://admin:hunter2@p0:30001/metrics?token=s3cr3t#frag"
	tg := sources.Target{ID: raw, URL: raw, Name: "p0", Role: sources.RolePrefill, Gateway: "https://u:pw-gw@gw:29000/metrics?key=k3y"}
	w.Targets(t0, []sources.Target{tg})
	w.Result(tg, sources.ScrapeResult{TargetID: raw, Time: t0, Raw: &sources.RawBody{Body: []byte("x 1\n")}})
	w.Skipped(raw, t0)
	w.Close()
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(zr)
	for _, secret := range []string{"hunter2", "s3cr3t", "admin", "pw-gw", "k3y", "frag"} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("%q written to the recording", secret)
		}
	}
	if !bytes.Contains(all, []byte("http://p0:30001/metrics")) {
		t.Errorf("redacted ID missing")
	}
}
