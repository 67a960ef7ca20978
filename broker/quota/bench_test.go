package quota

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkQuotaRecord is the per-request cost of a configured quota: the
// lookup and the record, from many goroutines over 64 clients.
//
//	go test -run '^$' -bench BenchmarkQuotaRecord ./broker/quota/
func BenchmarkQuotaRecord(b *testing.B) {
	tbl := NewTable([]Quota{{Entity: Entity{Client: DefaultPart}, Values: map[string]float64{ProducerByteRate: 1 << 40}}})
	s := NewSensors(DefaultWindow)
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		client := "client-" + strconv.Itoa(int(next.Add(1))%64)
		for pb.Next() {
			m, ok := tbl.Lookup(ProducerByteRate, "user", client)
			if !ok {
				b.Fatal("no quota")
			}
			s.Record(m, 1024, time.Now())
		}
	})
}
