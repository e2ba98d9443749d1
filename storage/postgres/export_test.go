package postgres

// Crash ends s as a killed process ends: no more heartbeats, its
// connections gone, its rows (replica, leases, claims) left behind.
func Crash(s *Store) {
	s.closing.Do(func() {
		close(s.stop)
		s.beating.Wait()
		s.pool.Close()
	})
}
