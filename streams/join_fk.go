package streams

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Foreign-key table-table joins (Kafka Streams' KTable.join with a
// foreign-key extractor, KIP-213). The left table K→V and the right table
// FK→VR need not be co-partitioned: each left row subscribes to the right
// row its foreign key names, through two internal topics the App creates.
//
//	left task (partition of the left topic)          right task (partition of the right topic)
//	left row k changes ──subscribe(fk, k, hash(v))──▶ <app>-<name>-subscription-registration (key fk)
//	                   ──unsubscribe(old fk, k)─────▶   subscription store fk|k → hash
//	                                                    answers with the right row of fk
//	<app>-<name>-subscription-response (key k) ◀──────  every right update of fk fans out
//	drops answers whose hash is not the current          to each subscribed k
//	row's, joins the others
//
// The registration topic has the right topic's partition count and is
// partitioned by fk like it (the App's key partitioner, Kafka's murmur2),
// so fk's subscriptions are processed by the task holding fk's right row;
// the response topic has the left topic's count and is partitioned by k.
// Both sides' topics must therefore be partitioned by key with Kafka's
// default partitioner and the serdes given here must encode keys as the
// topics hold them.
//
// A left update resubscribes (the answer carries the right value to join
// the new left value with); when its foreign key changed it also
// unsubscribes the old one, and the old result stays until the new
// answer arrives, so no result ever joins a left value with another
// foreign key's row. An answer to an older left value (its hash is not
// the current one's) is dropped. A left deletion unsubscribes and deletes
// the result at once.
//
// Record and store layouts (hash: FNV-1a 128 of the encoded left value):
//
//	registration value: 0x00 | instruction (1 subscribe, 2 unsubscribe) | hash[16] | k
//	response value:     0x00 | hash[16] | 0 (no right row) or 1 | right value
//	subscription store: uvarint(len fk) | fk | k  →  hash[16]
//	response store:     k  →  uvarint(len fk) | fk | hash[16] | state | right value
//
// The response store (left side) holds each left row's last subscription
// and, once its answer came (state 1: no right row, 2: a right row), the
// right value, from which reading the result table (a later join) computes
// the joined value.

// ForeignKeyJoined are the serdes of a foreign-key join: the left table's
// keys and values and the right table's keys (the foreign keys) and
// values. Keys and ForeignKeys must encode keys as the left and right
// topics hold them (the internal topics are partitioned by these bytes).
type ForeignKeyJoined[K, V, FK, VR any] struct {
	Keys          Serde[K]
	Values        Serde[V]
	ForeignKeys   Serde[FK]
	ForeignValues Serde[VR]
}

// JoinTablesByForeignKey joins each row of left with the row of right
// whose key fk extracts from it (an inner join): the result table holds
// joiner(k, v, right value) for every left row whose foreign key the
// right table holds. Every update of either side updates the result of
// the rows concerned; a left row whose right row is missing or deleted,
// or whose foreign key changed to a missing one, is deleted from the
// result (a tombstone for ToTopic). The tables need not be co-partitioned
// (see the comment above for how it works and what it needs). The name
// (Named, default "fk-join-<n>") names the internal topics
// <application id>-<name>-subscription-registration and
// -subscription-response and the stores <name>-subscription-store and
// <name>-response-store.
func JoinTablesByForeignKey[K, V, FK, VR, R any](left Table[K, V], right Table[FK, VR], fk func(key K, value V) (FK, error),
	joiner func(key K, left V, right VR) (R, error), serdes ForeignKeyJoined[K, V, FK, VR], opts ...OpOpt) Table[K, R] {
	return fkJoin(left, right, fk, serdes, "fk-join", opts, func(k K, v V, vr VR, ok bool) (R, bool, error) {
		if !ok {
			var zero R
			return zero, false, nil
		}
		out, err := joiner(k, v, vr)
		return out, true, err
	})
}

// LeftJoinTablesByForeignKey is JoinTablesByForeignKey that keeps every
// left row: the joiner gets a nil right value when the right table does
// not hold the row's foreign key (also after a right deletion). A left
// row's first result comes with the right side's answer.
func LeftJoinTablesByForeignKey[K, V, FK, VR, R any](left Table[K, V], right Table[FK, VR], fk func(key K, value V) (FK, error),
	joiner func(key K, left V, right *VR) (R, error), serdes ForeignKeyJoined[K, V, FK, VR], opts ...OpOpt) Table[K, R] {
	return fkJoin(left, right, fk, serdes, "fk-left-join", opts, func(k K, v V, vr VR, ok bool) (R, bool, error) {
		out, err := joiner(k, v, ptrIf(vr, ok))
		return out, true, err
	})
}

const (
	fkFormat      = 0x00
	fkSubscribe   = 1
	fkUnsubscribe = 2
	fkHashLen     = 16

	fkAwaiting     = 0 // response store: no answer to the last subscription yet
	fkAnswerAbsent = 1 // answered: the right table does not hold fk
	fkAnswered     = 2 // answered with a right value
)

func fkJoin[K, V, FK, VR, R any](left Table[K, V], right Table[FK, VR], fk func(K, V) (FK, error),
	serdes ForeignKeyJoined[K, V, FK, VR], kind string, opts []OpOpt, join func(k K, v V, vr VR, ok bool) (R, bool, error)) Table[K, R] {
	top := left.top
	stage := top.name(kind, opts)
	lv, rv := left.joinView(), right.joinView()
	out := &node[K, R]{}
	view := &tableView[K, R]{changes: &node[K, change[R]]{}}
	res := Table[K, R]{top: top, node: out, name: stage, view: view}
	if lv == nil || rv == nil {
		return res
	}
	if serdes.Keys == nil || serdes.Values == nil || serdes.ForeignKeys == nil || serdes.ForeignValues == nil || fk == nil {
		top.fail(fmt.Errorf("%w: %s: a foreign-key join needs the extractor and all four serdes", ErrTopology, stage))
		return res
	}
	reg := &internalTopic{name: stage, suffix: "subscription-registration", like: rv.srcs[0]}
	resp := &internalTopic{name: stage, suffix: "subscription-response", like: lv.srcs[0]}
	top.internals = append(top.internals, reg, resp)
	regSrc, respSrc := &source{internal: reg}, &source{internal: resp}
	top.sources = append(top.sources, regSrc, respSrc)
	top.coPartition(append(slices.Clone(rv.srcs), regSrc)...)
	top.coPartition(append(slices.Clone(lv.srcs), respSrc)...)
	subs := top.addStore(stage+"-subscription-store", regSrc)
	answers := top.addStore(stage+"-response-store", respSrc)
	view.srcs = append(slices.Clone(lv.srcs), respSrc)

	j := &fkJoiner[K, V, FK, VR, R]{stage: stage, serdes: serdes, fk: fk, join: join, lv: lv, rv: rv,
		reg: reg, resp: resp, subs: subs, answers: answers, out: out, view: view}
	view.get = j.get
	lv.changes.children = append(lv.changes.children, j.leftChanged)
	rv.changes.children = append(rv.changes.children, j.rightChanged)
	regSrc.handle = j.subscription
	respSrc.handle = j.response
	return res
}

// fkJoiner is one foreign-key join's processing: leftChanged and response
// run in the left table's tasks, subscription and rightChanged in the
// right table's.
type fkJoiner[K, V, FK, VR, R any] struct {
	stage   string
	serdes  ForeignKeyJoined[K, V, FK, VR]
	fk      func(K, V) (FK, error)
	join    func(k K, v V, vr VR, ok bool) (R, bool, error)
	lv      *tableView[K, V]
	rv      *tableView[FK, VR]
	reg     *internalTopic
	resp    *internalTopic
	subs    *storeSpec // right side: fk|k → hash
	answers *storeSpec // left side: k → last subscription and its answer
	out     *node[K, R]
	view    *tableView[K, R]
}

// responseEntry is a decoded response-store value.
type responseEntry struct {
	fk, hash []byte
	state    byte
	right    []byte
}

func (e responseEntry) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(len(e.fk)))
	b = append(append(append(b, e.fk...), e.hash...), e.state)
	return append(b, e.right...)
}

func decodeResponseEntry(b []byte) (responseEntry, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) || uint64(len(b)-w)-n < fkHashLen+1 {
		return responseEntry{}, errors.New("corrupt foreign-key join response store entry")
	}
	b = b[w:]
	e := responseEntry{fk: b[:n], hash: b[n : n+fkHashLen], state: b[n+fkHashLen], right: b[n+fkHashLen+1:]}
	if e.state > fkAnswered {
		return responseEntry{}, fmt.Errorf("foreign-key join response store entry in unknown state %d", e.state)
	}
	return e, nil
}

// subscriptionKey is the subscription store's key of (fk, k); with k nil
// it is the prefix of fk's subscriptions.
func subscriptionKey(fk, k []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2+len(fk)+len(k)), uint64(len(fk)))
	return append(append(b, fk...), k...)
}

// prefixEnd is the smallest key greater than every key starting with
// prefix, nil if there is none.
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func valueHash(b []byte) []byte {
	h := fnv.New128a()
	h.Write(b)
	return h.Sum(nil)
}

func (j *fkJoiner[K, V, FK, VR, R]) storeErr(err error) error {
	return &StageError{Stage: j.stage, Kind: KindOperator, Err: fmt.Errorf("%w: %w", ErrRetriable, err)}
}

func (j *fkJoiner[K, V, FK, VR, R]) corrupt(what string, err error) error {
	return &StageError{Stage: j.stage, Kind: KindDeserialize, Err: fmt.Errorf("%s: %w", what, err)}
}

func (j *fkJoiner[K, V, FK, VR, R]) serializeErr(what string, err error) error {
	return &StageError{Stage: j.stage, Kind: KindSerialize, Err: fmt.Errorf("%s: %w", what, err)}
}

// entry returns k's response-store entry, if any.
func (j *fkJoiner[K, V, FK, VR, R]) entry(c *procCtx, k K) (*store, []byte, responseEntry, bool, error) {
	st, kb, err := storeAndKey(c, j.answers, j.serdes.Keys, k)
	if err != nil {
		return nil, nil, responseEntry{}, false, err
	}
	b, ok, err := st.get(kb)
	if err != nil || !ok {
		if err != nil {
			err = j.storeErr(err)
		}
		return st, kb, responseEntry{}, false, err
	}
	e, err := decodeResponseEntry(b)
	if err != nil {
		return st, kb, e, false, j.corrupt("stored response", err)
	}
	return st, kb, e, true, nil
}

// register queues a registration record for fk.
func (j *fkJoiner[K, V, FK, VR, R]) register(c *procCtx, instruction byte, fk, k, hash []byte, r Record[K, change[V]]) {
	v := make([]byte, 0, 2+fkHashLen+len(k))
	v = append(v, fkFormat, instruction)
	if hash == nil {
		hash = make([]byte, fkHashLen)
	}
	v = append(append(v, hash...), k...)
	c.out = append(c.out, &kgo.Record{Topic: j.reg.resolved, Key: bytes.Clone(fk), Value: v, Timestamp: r.Timestamp})
}

// leftChanged (left task) subscribes a new or updated left row to its
// foreign key, unsubscribing the old one if it changed, and deletes the
// result of a deleted row.
func (j *fkJoiner[K, V, FK, VR, R]) leftChanged(c *procCtx, r Record[K, change[V]]) error {
	st, kb, old, had, err := j.entry(c, r.Key)
	if err != nil {
		return err
	}
	if r.Value.deleted {
		if had {
			j.register(c, fkUnsubscribe, old.fk, kb, nil, r)
			st.put(c, kb, nil, r.Timestamp)
		}
		return j.view.changes.emit(c, carry(r, r.Key, change[R]{deleted: true}))
	}
	f, err := j.fk(r.Key, r.Value.value)
	if err != nil {
		return opErr(j.stage, err)
	}
	fb, err := j.serdes.ForeignKeys.Encode(f)
	if err != nil {
		return j.serializeErr("foreign key", err)
	}
	vb, err := j.serdes.Values.Encode(r.Value.value)
	if err != nil {
		return j.serializeErr("left value", err)
	}
	if had && !bytes.Equal(old.fk, fb) {
		j.register(c, fkUnsubscribe, old.fk, kb, nil, r)
	}
	e := responseEntry{fk: fb, hash: valueHash(vb), state: fkAwaiting}
	j.register(c, fkSubscribe, fb, kb, e.hash, r)
	st.put(c, kb, e.encode(), r.Timestamp)
	return nil
}

// respond queues the answer to k's subscription with hash: the right value
// vr if ok.
func (j *fkJoiner[K, V, FK, VR, R]) respond(c *procCtx, k, hash []byte, vr []byte, ok bool, r *kgo.Record) {
	v := make([]byte, 0, 2+fkHashLen+len(vr))
	v = append(append(v, fkFormat), hash...)
	if ok {
		v = append(append(v, 1), vr...)
	} else {
		v = append(v, 0)
	}
	c.out = append(c.out, &kgo.Record{Topic: j.resp.resolved, Key: bytes.Clone(k), Value: v, Timestamp: r.Timestamp})
}

// subscription (right task) records or removes a subscription and answers
// a new one with the right table's current value.
func (j *fkJoiner[K, V, FK, VR, R]) subscription(c *procCtx, kr *kgo.Record) error {
	v := kr.Value
	if len(v) < 2+fkHashLen || v[0] != fkFormat || (v[1] != fkSubscribe && v[1] != fkUnsubscribe) {
		return j.corrupt("subscription", fmt.Errorf("unknown format (%d bytes)", len(v)))
	}
	f, err := j.serdes.ForeignKeys.Decode(kr.Key)
	if err != nil {
		return j.corrupt("subscription foreign key", err)
	}
	st, fb, err := storeAndKey(c, j.subs, j.serdes.ForeignKeys, f)
	if err != nil {
		return err
	}
	hash, k := v[2:2+fkHashLen], v[2+fkHashLen:]
	key := subscriptionKey(fb, k)
	if v[1] == fkUnsubscribe {
		st.put(c, key, nil, kr.Timestamp)
		return nil
	}
	st.put(c, key, hash, kr.Timestamp)
	vr, ok, err := j.rv.get(c, f)
	if err != nil {
		return err
	}
	var vrb []byte
	if ok {
		if vrb, err = j.serdes.ForeignValues.Encode(vr); err != nil {
			return j.serializeErr("right value", err)
		}
	}
	j.respond(c, k, hash, vrb, ok, kr)
	return nil
}

// rightChanged (right task) answers every subscription of the updated or
// deleted right row again.
func (j *fkJoiner[K, V, FK, VR, R]) rightChanged(c *procCtx, r Record[FK, change[VR]]) error {
	st, fb, err := storeAndKey(c, j.subs, j.serdes.ForeignKeys, r.Key)
	if err != nil {
		return err
	}
	var vrb []byte
	if !r.Value.deleted {
		if vrb, err = j.serdes.ForeignValues.Encode(r.Value.value); err != nil {
			return j.serializeErr("right value", err)
		}
	}
	at := &kgo.Record{Timestamp: r.Timestamp}
	prefix := subscriptionKey(fb, nil)
	err = st.scan(prefix, prefixEnd(prefix), func(key, hash []byte) (bool, error) {
		j.respond(c, key[len(prefix):], hash, vrb, !r.Value.deleted, at)
		return true, nil
	})
	if err != nil {
		return j.storeErr(err)
	}
	return nil
}

// response (left task) joins an answer with the left row it answers, or
// drops it when the row changed or went since it subscribed.
func (j *fkJoiner[K, V, FK, VR, R]) response(c *procCtx, kr *kgo.Record) error {
	v := kr.Value
	if len(v) < 2+fkHashLen || v[0] != fkFormat || v[1+fkHashLen] > 1 {
		return j.corrupt("subscription response", fmt.Errorf("unknown format (%d bytes)", len(v)))
	}
	k, err := j.serdes.Keys.Decode(kr.Key)
	if err != nil {
		return j.corrupt("subscription response key", err)
	}
	st, kb, e, had, err := j.entry(c, k)
	if err != nil || !had || !bytes.Equal(e.hash, v[1:1+fkHashLen]) {
		return err // a stale answer: the row changed or was deleted since
	}
	e.state, e.right = fkAnswerAbsent, nil
	if v[1+fkHashLen] == 1 {
		e.state, e.right = fkAnswered, v[2+fkHashLen:]
	}
	st.put(c, kb, e.encode(), kr.Timestamp)
	res, ok, err := j.result(c, k, e)
	if err != nil {
		return err
	}
	r := Record[K, change[R]]{Key: k, Headers: kr.Headers, Timestamp: kr.Timestamp,
		Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset}
	if !ok {
		r.Value.deleted = true
		return j.view.changes.emit(c, r)
	}
	if err := j.out.emit(c, carry(r, k, res)); err != nil {
		return err
	}
	r.Value.value = res
	return j.view.changes.emit(c, r)
}

// result computes k's joined value from its left row and the answer in e.
func (j *fkJoiner[K, V, FK, VR, R]) result(c *procCtx, k K, e responseEntry) (R, bool, error) {
	var zero R
	lval, ok, err := j.lv.get(c, k)
	if err != nil || !ok || e.state == fkAwaiting {
		return zero, false, err
	}
	var vr VR
	if e.state == fkAnswered {
		if vr, err = j.serdes.ForeignValues.Decode(e.right); err != nil {
			return zero, false, j.corrupt("right value", err)
		}
	}
	res, ok, err := j.join(k, lval, vr, e.state == fkAnswered)
	if err != nil {
		return zero, false, opErr(j.stage, err)
	}
	return res, ok, nil
}

// get reads k's joined value (a join with the result table): none while
// the last subscription is unanswered.
func (j *fkJoiner[K, V, FK, VR, R]) get(c *procCtx, k K) (R, bool, error) {
	_, _, e, had, err := j.entry(c, k)
	if err != nil || !had {
		var zero R
		return zero, false, err
	}
	return j.result(c, k, e)
}

// partitionsLike returns the partition count of the topic src reads (the
// App creates a foreign-key join's topics with the counts of the tables'
// topics).
func partitionsLike(ctx context.Context, adm *kadm.Client, src *source) (int32, error) {
	tp := sourceTopic(src)
	topics, err := adm.ListTopics(ctx, tp)
	if err != nil {
		return 0, fmt.Errorf("streams: describing %s: %w", tp, err)
	}
	td, ok := topics[tp]
	if !ok || td.Err != nil || len(td.Partitions) == 0 {
		return 0, fmt.Errorf("streams: join input topic %s does not exist; create it first", tp)
	}
	return int32(len(td.Partitions)), nil
}
