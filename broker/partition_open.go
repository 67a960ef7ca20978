package broker

import (
	"runtime"
	"sync"
	"time"

	"github.com/strata-streaming/strata/broker/storage"
)

// openJob is one hosted partition a reconcile pass opens: reconcile lists
// them all first, openPartitions opens them, and reconcile then installs
// each result in its topic.
type openJob struct {
	ts          *topicState
	index       int32
	leaderEpoch int32
	// Results, written by the worker that opened it.
	p   *partition
	err error
}

type openKey struct {
	ts    *topicState
	index int32
}

// partitionOpenWorkers bounds how many partition logs open at once. The
// work of one open is a few small reads and, after a crash, a scan of the
// unflushed tail (CPU: CRC checks) or an fsync of a repair (disk); a few
// workers per core keep both busy without thousands of goroutines.
func partitionOpenWorkers() int { return min(max(4*runtime.GOMAXPROCS(0), 8), 64) }

// openPartitions opens (creating where a bucket recovery asks for it) the
// logs of jobs on a bounded pool of workers, and logs one summary line for
// all of them. It takes no lock of the manager: the partitions become
// visible only when reconcile installs them.
func (m *topicManager) openPartitions(jobs []*openJob) {
	if len(jobs) == 0 {
		return
	}
	s := m.s
	start := time.Now()
	next := make(chan *openJob)
	var wg sync.WaitGroup
	for range min(partitionOpenWorkers(), len(jobs)) {
		wg.Add(1)
		go func() { // joined below, before openPartitions returns
			defer wg.Done()
			for j := range next {
				j.err = createPartitionAt(s, j.ts, j.index, m.recoveryStarts(j.ts.id))
				if j.err == nil {
					j.p, j.err = openPartition(s, j.ts, j.index, j.leaderEpoch)
				}
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()

	var total storage.RecoveryStats
	failed := 0
	for _, j := range jobs {
		if j.err != nil {
			failed++
			continue
		}
		st := j.p.Log().RecoveryStats()
		total.BytesScanned += st.BytesScanned
		total.SegmentsScanned += st.SegmentsScanned
		total.IndexesRebuilt += st.IndexesRebuilt
		total.BytesTruncated += st.BytesTruncated
		total.SegmentsRemoved += st.SegmentsRemoved
	}
	s.logger.Info("partition logs opened", "partitions", len(jobs)-failed, "failed", failed,
		"took", time.Since(start).Round(time.Millisecond),
		"bytes_recovered", total.BytesScanned, "segments_recovered", total.SegmentsScanned,
		"bytes_truncated", total.BytesTruncated, "indexes_rebuilt", total.IndexesRebuilt,
		"segments_removed", total.SegmentsRemoved)
}
