package sources

import "time"

// Player is a Backend that plays a recording (sources/replay). The UI
// shows its progress and routes pause, seek and speed keys to it; its
// Now is the recording's clock.
type Player interface {
	Backend
	// Progress reports where playback is.
	Progress() PlayProgress
	// SetPaused stops or resumes the recording's clock.
	SetPaused(bool)
	// Seek moves the position by d (negative = back), clamped to the
	// recording. History is rebuilt from the recording when needed.
	Seek(d time.Duration)
	// SetSpeed sets recorded seconds per wall-clock second, clamped to
	// [MinSpeed, MaxSpeed].
	SetSpeed(float64)
}

// Playback speed limits.
const (
	MinSpeed = 0.1
	MaxSpeed = 1000
)

// PlayProgress is a player's position in its recording.
type PlayProgress struct {
	// File is the recording's name (as given, for the progress line).
	File string
	// Start and End are the recording's first and last record times; Pos
	// is the time everything up to has been replayed.
	Start, End, Pos time.Time
	Speed           float64
	Paused          bool
	// Seeking is true while history is being rebuilt after a seek.
	Seeking bool
	// Ended is true once Pos reached End.
	Ended bool
	// Damage says in a few words where a damaged recording stops, e.g.
	// "truncated at byte 995121" ("" when the file is whole); playback
	// ends there.
	Damage string
}
