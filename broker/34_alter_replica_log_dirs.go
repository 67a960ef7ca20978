package broker

// AlterReplicaLogDirs (key 34), v0-2 (KIP-113):
//   - Moves this node's replica of each listed partition to the named log
//     dir, while it keeps serving: the answer comes once the move has
//     started; DescribeLogDirs shows the copy (is_future) until it is done.
//     The copy, the short swap under the replica's lock and the removal
//     of the old directory are replica.MoveLog's.
//   - A partition already in that dir, or already moving there: NONE. One
//     moving elsewhere: that move is cancelled and the new one starts.
//   - LOG_DIR_NOT_FOUND for a dir that is not in log.dirs (absolute or
//     as configured), KAFKA_STORAGE_ERROR when it, or the partition's
//     current dir, is offline; UNKNOWN_TOPIC_OR_PARTITION for a partition
//     that does not exist; REPLICA_NOT_AVAILABLE when this node holds no
//     replica of it.
//   - Needs ALTER on the cluster: CLUSTER_AUTHORIZATION_FAILED for every
//     partition otherwise (the response has no top-level error).
//   - A restart abandons a move in progress (the future copy is deleted,
//     removeOrphanDirs).

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/replica"
)

func init() {
	registerAPI(kmsg.AlterReplicaLogDirs, 0, 2, handleAlterReplicaLogDirs)
	checksACLs(kmsg.AlterReplicaLogDirs)
}

func handleAlterReplicaLogDirs(rc *requestContext, req *kmsg.AlterReplicaLogDirsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	allowed := rc.authorizeCluster(acl.OpAlter)
	byTopic := map[string]int{}
	answer := func(topic string, partition int32, code int16) {
		i, ok := byTopic[topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[topic] = i
			rt := kmsg.NewAlterReplicaLogDirsResponseTopic()
			rt.Topic = topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		rp.Partition = partition
		rp.ErrorCode = rc.countError(code)
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	for _, d := range req.Dirs {
		dest := rc.s.logDirs.byPath(d.Dir)
		for _, t := range d.Topics {
			for _, index := range t.Partitions {
				switch {
				case !allowed:
					answer(t.Topic, index, kerr.ClusterAuthorizationFailed.Code)
				default:
					answer(t.Topic, index, rc.s.startLogDirMove(t.Topic, index, dest))
				}
			}
		}
	}
	return resp
}

// startLogDirMove starts moving the partition's replica to dest and
// returns the partition's error code.
func (s *Server) startLogDirMove(topic string, index int32, dest *logDir) int16 {
	if !s.topics.exists(topic, index) {
		return kerr.UnknownTopicOrPartition.Code
	}
	if dest == nil {
		return kerr.LogDirNotFound.Code
	}
	p := s.topics.partition(topic, index)
	if p == nil {
		return kerr.ReplicaNotAvailable.Code
	}
	cur := s.logDirs.of(p.Log().Dir())
	if dest.offline() || cur == nil || cur.offline() {
		return kerr.KafkaStorageError.Code
	}
	s.moves.start(s, p, cur, dest)
	return 0
}

// logDirMoves are the moves between log dirs in progress, one per
// partition at most.
type logDirMoves struct {
	mu     sync.Mutex
	byPart map[*partition]*logDirMove
}

// logDirMove is one partition's move to dest.
type logDirMove struct {
	dest   *logDir
	cancel context.CancelFunc
	done   chan struct{}
	copied atomic.Pointer[replica.MoveProgress] // after each copy round
}

// get returns the partition's move in progress, or nil.
func (m *logDirMoves) get(p *partition) *logDirMove {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byPart[p]
}

// start begins moving p from cur to dest unless it is there or on its way.
func (m *logDirMoves) start(s *Server, p *partition, cur, dest *logDir) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.byPart[p]
	if prev != nil && prev.dest == dest {
		return
	}
	if prev != nil {
		prev.cancel()
	}
	if cur == dest {
		if prev != nil {
			delete(m.byPart, p)
		}
		return
	}
	if m.byPart == nil {
		m.byPart = map[*partition]*logDirMove{}
	}
	ctx, cancel := context.WithCancel(s.ctx)
	mv := &logDirMove{dest: dest, cancel: cancel, done: make(chan struct{})}
	m.byPart[p] = mv
	s.goTask(func() {
		defer close(mv.done)
		defer cancel()
		if prev != nil {
			<-prev.done
		}
		err := m.run(ctx, s, p, mv)
		m.mu.Lock()
		if m.byPart[p] == mv {
			delete(m.byPart, p)
		}
		m.mu.Unlock()
		name := partitionDirName(p.topic.name, p.index)
		switch {
		case err == nil:
			s.logger.Info("partition moved to another log dir", "partition", name, "dir", dest.path)
		case errors.Is(err, context.Canceled):
			s.logger.Info("move between log dirs cancelled", "partition", name, "dir", dest.path)
		default:
			s.logger.Error("move between log dirs failed", "partition", name, "dir", dest.path, "err", err)
			s.logDirs.probe() // a copy's I/O error may be a failing disk
		}
	})
}

// run is one move: the copy, swap and removal of replica.MoveLog.
func (m *logDirMoves) run(ctx context.Context, s *Server, p *partition, mv *logDirMove) error {
	name := partitionDirName(p.topic.name, p.index)
	if s.logDirs.of(p.Log().Dir()) == mv.dest {
		return nil // the move it replaced got there
	}
	err := p.MoveLog(ctx, filepath.Join(mv.dest.path, name+futureDirSuffix), filepath.Join(mv.dest.path, name),
		func(pr replica.MoveProgress) { mv.copied.Store(&pr) })
	if err != nil {
		return err
	}
	s.logDirs.moved(name, mv.dest)
	return nil
}

// progress is the future copy's size and its offset lag behind the log
// end, for DescribeLogDirs.
func (mv *logDirMove) progress(p *partition) (size, lag int64) {
	pr := mv.copied.Load()
	if pr == nil {
		return 0, max(0, p.LogEndOffset()-p.Log().LogStartOffset())
	}
	return pr.Bytes, max(0, p.LogEndOffset()-max(pr.End, p.Log().LogStartOffset()))
}
