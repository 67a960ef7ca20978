package metadata

import "sync"

// Subscribe calls fn for every record applied from now on, in log order,
// on a goroutine of its own (fn may block or call Propose; records queue
// meanwhile). Rejected records are not delivered. The returned function
// stops the subscription; Close stops all.
func (n *Node) Subscribe(fn func(Applied)) (cancel func()) {
	return n.subscribe(fn, nil)
}

// subscribe is Subscribe; start, when set, is called with the applied
// view at the moment of registration, before fn can run. A batch being
// published concurrently may be both in that view and delivered: fn must
// skip records at or below the view's index.
func (n *Node) subscribe(fn func(Applied), start func(*appliedView)) (cancel func()) {
	s := &subscriber{fn: fn, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return func() {}
	}
	if start != nil {
		start(n.view.Load())
	}
	n.mu.subs[s] = struct{}{}
	n.mu.Unlock()
	n.wg.Add(1)
	go s.run(&n.wg)
	var once sync.Once
	return func() {
		once.Do(func() {
			n.mu.Lock()
			_, live := n.mu.subs[s]
			delete(n.mu.subs, s)
			n.mu.Unlock()
			if live { // else Close stopped it already
				close(s.stop)
			}
		})
	}
}

type subscriber struct {
	fn   func(Applied)
	wake chan struct{}
	stop chan struct{}

	mu    sync.Mutex
	queue []Applied
}

func (s *subscriber) push(a []Applied) {
	s.mu.Lock()
	s.queue = append(s.queue, a...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) run(wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, a := range batch {
			select {
			case <-s.stop:
				return
			default:
			}
			s.fn(a)
		}
	}
}
