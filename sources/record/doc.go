// Package record writes and reads pdtop recordings: every raw scrape body
// with its receive time and target, the target list as it changes, and
// skipped ticks, so that sources/replay can feed them back through the
// same pipeline (collect.FromBody → store → Snapshot) as a live run.
//
// # Format, version 1
//
// A recording is a sequence of gzip members (RFC 1952; `zcat` reads the
// whole file). Each member holds whole records and is closed at least
// every FlushEvery (default 1 s), so a crashed recorder loses at most the
// last second, and a reader can start at any member. Inside, each record
// is
//
//	kind    1 byte
//	length  uvarint, bytes of payload
//	payload length bytes
//	crc     4 bytes little-endian: CRC-32C (Castagnoli) of kind and payload
//
// Kinds and payloads:
//
//	1 header   JSON {"format":"pdtop-recording","version":1,"created":RFC 3339,
//	           "interval_ms":N,"tool":"pdtop"} — the file's first record
//	2 targets  JSON {"t":unix ns,"targets":[{"id","name","role","origin","gateway",
//	           "key","auth"}]} (key: host:port as gateways know the worker)
//	           — the full target list, at the start and whenever it changes
//	3 scrape   uvarint n, then n bytes of JSON {"t":unix ns,"id","dur_ns",
//	           "wire","body","err":{"class","status","msg"},"warn":[…]},
//	           then the raw (decompressed) /metrics body (empty on a failed
//	           fetch)
//	4 skipped  JSON {"t":unix ns,"id"} — a tick skipped because the
//	           target's previous scrape was still running
//	5 observation  as a scrape (with "via" and "direct_err"), then a gob-
//	           encoded sources.Observation: a worker read through its
//	           gateway's /engine_metrics re-export, which has no body of
//	           its own
//
// Readers skip records of unknown kinds (later minor additions) and refuse
// a header with a higher version.
//
// # What is never written
//
// Target URLs, request headers and credentials are never written, and a
// body is scrubbed of its target's credentials (a hostile target can echo
// them) before it is kept. Target IDs and gateway IDs are written as scheme://host:port/path (any
// userinfo, query or fragment removed even if the caller left one in);
// error messages and warnings arrive already sanitised and redacted by
// sources/scrape. Bodies are what the targets served.
//
// # Damage
//
// Every record carries its own checksum and is delivered only when it is
// whole and matches, so a truncated or corrupt file replays up to the
// damage; the reader then reports a *DamageError saying at which byte and
// why it stopped.
//
// Why gzip and not zstd: each member is short (one second of scrapes,
// one body per target), so zstd's long-window advantage across repeated
// bodies never comes into play, while gzip is in the standard library, is
// read by every tool, and its independent members give both crash safety
// and seek points.
package record
