package storage

// Epochs returns the leader-epoch cache: each epoch with the first offset it
// wrote, in order; entries before the log start are clamped to it.
func (l *Log) Epochs() []EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]EpochEntry, len(l.mu.epochs.entries))
	for i, e := range l.mu.epochs.entries {
		out[i] = EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	return out
}
