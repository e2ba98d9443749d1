package slacktest

import "time"

// SetLatency makes every Web API call wait d before it takes effect and is
// answered, as a distant server would; 0, the default, answers at once.
// Calls wait concurrently, never behind each other; a message's Posted is
// when it took effect, after the latency, and a Call's At is when it
// arrived. A call whose client gives up while it waits takes no effect.
// The latency applies to calls that arrive after SetLatency, on top of a
// Fault's Delay.
func (s *Server) SetLatency(d time.Duration) {
	s.latency.Store(int64(max(d, 0)))
}
