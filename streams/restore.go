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
		opts := []kgo.Opt{kgo.SeedBrokers(a.cfg.brokers...), kgo.KeepControlRecords(),
			kgo.ClientID("strata-streams-" + a.cfg.appID + "-restore")}
		if a.cfg.guarantee == ExactlyOnceV2 {
			opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		}
		cl, err := kgo.NewClient(append(opts, a.cfg.clientOpts...)...)
		if err != nil {
			return fmt.Errorf("streams: restore client: %w", err)
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
					batch := make([]*kgo.Record, 0, len(fp.Records))
					last, done := int64(-1), false
					for _, rec := range fp.Records {
						if rec.Offset >= stop {
							// Compaction may have removed the
							// records just below the end.
							done = true
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
						if err := byTP[tp].restoreBatch(batch, last+1); err != nil {
							return fmt.Errorf("streams: restoring %s[%d]: %w", tp.topic, tp.partition, err)
						}
						byTP[tp].noteRestoreRemaining(stop - last - 1)
					}
					if done || last+1 >= stop {
						byTP[tp].noteRestoreRemaining(0)
						delete(end, tp)
					}
				}
			}
		}
	}
	a.stats.restoredRecords.Add(uint64(records))
	a.stats.restoredBytes.Add(uint64(bytes))
	a.stats.restoreNanos.Add(uint64(time.Since(start)))
	a.cfg.logger.Info("restored stores", "records", records, "bytes", bytes, "took", time.Since(start))
	return nil
}
