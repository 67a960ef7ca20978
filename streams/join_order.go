package streams

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Record order across a join's inputs. Kafka Streams buffers each task's
// partitions and always processes the head record with the lowest
// timestamp (waiting up to max.task.idle.ms for an empty partition), so a
// stream record sees the table as of its own timestamp. Strata's App
// processes one fetch at a time; when the topology joins, the records of
// the partitions of one task in a fetch are interleaved by timestamp
// (lowest first, ties in fetch order), each partition still in offset
// order. Across fetches there is no waiting: records of one input fetched
// before the other's are processed first.

// fetchedPartition is a partition's records in a fetch and the next one to
// process.
type fetchedPartition struct {
	p    kgo.FetchTopicPartition
	next int
}

// eachInTimeOrder calls fn for every record of the fetch, the partitions
// of one task interleaved by timestamp, and stops at fn's first error.
// done is called for every partition once its records are processed (or
// the first error stopped the loop) with how many were.
func eachInTimeOrder(fetches kgo.Fetches, groups map[string]string,
	fn func(p *kgo.FetchTopicPartition, r *kgo.Record) error, done func(p *kgo.FetchTopicPartition, processed int)) error {
	var tasks [][]*fetchedPartition
	index := map[topicPartition]int{}
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		fp := &fetchedPartition{p: p}
		g, ok := groups[p.Topic]
		if !ok {
			tasks = append(tasks, []*fetchedPartition{fp})
			return
		}
		tp := topicPartition{g, p.Partition}
		if i, ok := index[tp]; ok {
			tasks[i] = append(tasks[i], fp)
			return
		}
		index[tp] = len(tasks)
		tasks = append(tasks, []*fetchedPartition{fp})
	})
	var err error
	for _, task := range tasks {
		for err == nil {
			var head *fetchedPartition
			for _, fp := range task {
				if fp.next < len(fp.p.Records) &&
					(head == nil || fp.p.Records[fp.next].Timestamp.Before(head.p.Records[head.next].Timestamp)) {
					head = fp
				}
			}
			if head == nil {
				break
			}
			err = fn(&head.p, head.p.Records[head.next])
			if err == nil {
				head.next++
			}
		}
	}
	for _, task := range tasks {
		for _, fp := range task {
			done(&fp.p, fp.next)
		}
	}
	return err
}

// processJoinedAtLeastOnce is processAtLeastOnce for topologies with joins.
func (a *App) processJoinedAtLeastOnce(produceCtx context.Context, cl *kgo.Client, proc *processor, fetches kgo.Fetches) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return eachInTimeOrder(fetches, proc.state.groups,
		func(p *kgo.FetchTopicPartition, r *kgo.Record) error {
			if !a.mu.owned[p.Topic][p.Partition] {
				return nil
			}
			outs, err := proc.process(r)
			if err != nil {
				return err
			}
			for _, o := range outs {
				cl.Produce(produceCtx, o, a.promise)
			}
			return nil
		},
		func(p *kgo.FetchTopicPartition, processed int) {
			if processed == 0 || !a.mu.owned[p.Topic][p.Partition] {
				return
			}
			r := p.Records[processed-1]
			m := a.mu.processed[p.Topic]
			if m == nil {
				m = map[int32]kgo.EpochOffset{}
				a.mu.processed[p.Topic] = m
			}
			m[p.Partition] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
			a.updateLagLocked(*p)
		})
}

// processJoinedExactlyOnce is processExactlyOnce for topologies with joins.
func (a *App) processJoinedExactlyOnce(produceCtx context.Context, sess *kgo.GroupTransactSession, proc *processor, fetches kgo.Fetches) error {
	return eachInTimeOrder(fetches, proc.state.groups,
		func(p *kgo.FetchTopicPartition, r *kgo.Record) error {
			if !a.owns(p.Topic, p.Partition) {
				return nil // revoked since the poll (processExactlyOnce)
			}
			outs, err := proc.process(r)
			if err != nil {
				return err
			}
			for _, o := range outs {
				sess.Produce(produceCtx, o, a.promise)
			}
			return nil
		},
		func(p *kgo.FetchTopicPartition, processed int) {
			if processed < len(p.Records) {
				return
			}
			a.mu.Lock()
			a.updateLagLocked(*p)
			a.mu.Unlock()
		})
}
