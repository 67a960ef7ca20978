package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// restorer replays changelog partitions into stores with a consumer of its
// own (no group), created on first use and closed with the run.
type restorer struct {
	app *App
	cl  *kgo.Client
}

func (r *restorer) close() {
	if r.cl != nil {
		r.cl.Close()
		r.cl = nil
	}
}

// readableEnds lists where a restore of topics stops: the last stable
// offsets under exactly-once (read_committed sees nothing past them), else
// the end offsets.
func (a *App) readableEnds(ctx context.Context, cl *kgo.Client, topics []string) (kadm.ListedOffsets, error) {
	adm := kadm.NewClient(cl)
	var (
		ends kadm.ListedOffsets
		err  error
	)
	if a.cfg.guarantee == ExactlyOnceV2 {
		ends, err = adm.ListCommittedOffsets(ctx, topics...)
	} else {
		ends, err = adm.ListEndOffsets(ctx, topics...)
	}
	if err == nil {
		err = ends.Error()
	}
	return ends, err
}

// changelogClient is a consumer of changelogs outside the group (restores,
// standbys): read_committed under exactly-once, control records kept so a
// store's next offset moves past transaction markers.
func (a *App) changelogClient(role string) (*kgo.Client, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(a.cfg.brokers...), kgo.KeepControlRecords(),
		kgo.ClientID("strata-streams-" + a.cfg.appID + "-" + role)}
	if a.cfg.guarantee == ExactlyOnceV2 {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(append(opts, a.cfg.clientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("streams: %s client: %w", role, err)
	}
	return cl, nil
}

// restore reads each store's changelog partition from the store's next
// offset up to the partition's end as of now (the last stable offset under
// exactly-once, whose restore reads committed records only) and applies the
// records in batches.
func (r *restorer) restore(ctx context.Context, stores []*store) error {
	if len(stores) == 0 {
		return nil
	}
	a := r.app
	if r.cl == nil {
		cl, err := a.changelogClient("restore")
		if err != nil {
			return err
		}
		r.cl = cl
	}
	start := time.Now()
	topics := make([]string, 0, len(stores))
	for _, st := range stores {
		topics = append(topics, st.spec.changelog)
	}
	ends, err := a.readableEnds(ctx, r.cl, topics)
	if err != nil {
		return fmt.Errorf("streams: changelog end offsets: %w", err)
	}
	byTP := map[topicPartition]*store{}
	end := map[topicPartition]int64{}
	assign := map[string]map[int32]kgo.Offset{}
	for _, st := range stores {
		tp := topicPartition{st.spec.changelog, st.partition}
		lo, ok := ends.Lookup(tp.topic, tp.partition)
		if !ok {
			return fmt.Errorf("streams: changelog %s has no partition %d", tp.topic, tp.partition)
		}
		if lo.Offset <= st.nextOffset {
			continue
		}
		byTP[tp], end[tp] = st, lo.Offset
		st.noteRestoreRemaining(lo.Offset - st.nextOffset)
		if assign[tp.topic] == nil {
			assign[tp.topic] = map[int32]kgo.Offset{}
		}
		assign[tp.topic][tp.partition] = kgo.NewOffset().At(st.nextOffset)
	}
	if len(byTP) == 0 {
		return nil
	}
	r.cl.AddConsumePartitions(assign)
	defer func() {
		rm := map[string][]int32{}
		for tp := range byTP {
			rm[tp.topic] = append(rm[tp.topic], tp.partition)
		}
		r.cl.RemoveConsumePartitions(rm)
	}()
	// left is what the restore has still to read, in offsets (an upper
	// bound on records: compaction removes some), shown while it runs.
	var left int64
	for tp, e := range end {
		left += e - byTP[tp].nextOffset
	}
	a.stats.restoreRemaining.Add(left)
	defer func() { a.stats.restoreRemaining.Add(-left) }()
	var records, bytes int64
	for len(end) > 0 {
		fetches := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("streams: restoring %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		for _, p := range fetches {
			for _, t := range p.Topics {
				for _, fp := range t.Partitions {
					tp := topicPartition{t.Topic, fp.Partition}
					stop, ok := end[tp]
					if !ok || len(fp.Records) == 0 {
						continue
					}
					st := byTP[tp]
					before := stop - st.nextOffset
					n, b, done, err := applyChangelog(st, fp.Records, stop)
					if err != nil {
						return fmt.Errorf("streams: restoring %s[%d]: %w", tp.topic, tp.partition, err)
					}
					records, bytes = records+n, bytes+b
					a.stats.restoredRecords.Add(uint64(n))
					a.stats.restoredBytes.Add(uint64(b))
					after := max(stop-st.nextOffset, 0)
					if done {
						after = 0
						delete(end, tp)
					}
					st.noteRestoreRemaining(after)
					left -= before - after
					a.stats.restoreRemaining.Add(after - before)
				}
			}
		}
	}
	a.stats.restoreNanos.Add(uint64(time.Since(start)))
	a.stats.restores.Add(1)
	a.cfg.logger.Info("restored stores", "records", records, "bytes", bytes, "took", time.Since(start))
	return nil
}

// applyChangelog applies the fetched changelog records of st's partition
// that lie below stop (stop < 0: all of them) in one batch, control records
// only moving the store's next offset past them. It returns the data
// records applied, their key and value bytes, and whether stop is reached.
func applyChangelog(st *store, recs []*kgo.Record, stop int64) (records, bytes int64, reached bool, err error) {
	batch := make([]*kgo.Record, 0, len(recs))
	last := int64(-1)
	for _, rec := range recs {
		if stop >= 0 && rec.Offset >= stop {
			// Compaction may have removed the records just below
			// the end.
			reached = true
			break
		}
		last = rec.Offset
		if rec.Attrs.IsControl() {
			continue
		}
		batch = append(batch, rec)
		records++
		bytes += int64(len(rec.Key) + len(rec.Value))
	}
	if last >= 0 {
		if err := st.restoreBatch(batch, last+1); err != nil {
			return 0, 0, false, err
		}
		reached = reached || (stop >= 0 && last+1 >= stop)
	}
	return records, bytes, reached, nil
}
