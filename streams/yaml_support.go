package streams

// MapRecordValues maps each record's value with access to the whole
// record (headers, timestamp, origin) and keeps its key: unlike MapRecord,
// a GroupByKey after it needs no repartition. Declarative jobs use it for
// the steps that never change keys.
func MapRecordValues[K, V, V2 any](s Stream[K, V], fn func(Record[K, V]) (V2, error), opts ...OpOpt) Stream[K, V2] {
	out := MapRecord(s, func(r Record[K, V]) (Record[K, V2], error) {
		v, err := fn(r)
		return carry(r, r.Key, v), err
	}, opts...)
	out.rekeyed = s.rekeyed
	return out
}
