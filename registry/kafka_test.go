package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// TestRegistryKafka runs registries against a real broker (one `strata server`
// process, one _schemas topic per subtest).
func TestRegistryKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker")
	}
	b := brokertest.Start(t)
	start := func(t *testing.T, topic string) *Registry {
		t.Helper()
		return startRegistry(t, nil, func(c *Config) {
			c.Log, c.Brokers, c.Topic = nil, []string{b.Addr}, topic
			c.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
		})
	}
	t.Run("TopicCreated", func(t *testing.T) {
		start(t, "_schemas")
		adm := admin(t, b.Addr)
		configs, err := adm.DescribeTopicConfigs(context.Background(), "_schemas")
		if err != nil {
			t.Fatal(err)
		}
		rc, err := configs.On("_schemas", nil)
		if err != nil {
			t.Fatal(err)
		}
		policy := ""
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil {
				policy = *c.Value
			}
		}
		topics, err := adm.ListTopics(context.Background(), "_schemas")
		if err != nil || policy != "compact" || len(topics["_schemas"].Partitions) != 1 {
			t.Fatalf("cleanup.policy=%q, topics %v, err %v", policy, topics, err)
		}
	})
	t.Run("ExistingTopicChecked", func(t *testing.T) {
		adm := admin(t, b.Addr)
		ctx := context.Background()
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, "_two_partitions"); err != nil {
			t.Fatal(err)
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": ptr("delete")}, "_not_compacted"); err != nil {
			t.Fatal(err)
		}
		for topic, want := range map[string]string{"_two_partitions": "has 2 partitions", "_not_compacted": "cleanup.policy=delete"} {
			cfg := DefaultConfig()
			cfg.Brokers, cfg.Topic, cfg.Listen = []string{b.Addr}, topic, "127.0.0.1:0"
			r, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = r.Start(ctx)
			cancel()
			if err == nil || !strings.Contains(err.Error(), want) {
				r.Close()
				t.Fatalf("%s: Start = %v, want an error saying %q", topic, err, want)
			}
		}
	})
	t.Run("ExactReplicationFactorWaitsForBrokers", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Brokers, cfg.Topic, cfg.Listen, cfg.ReplicationFactor = []string{b.Addr}, "_schemas_rf2", "127.0.0.1:0", 2
		r, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		if err := r.Start(ctx); err == nil || !strings.Contains(err.Error(), "replication factor 2: 1 live brokers") {
			r.Close()
			t.Fatalf("Start = %v, want it to give up waiting for a second broker", err)
		}
		if topics, err := admin(t, b.Addr).ListTopics(context.Background(), "_schemas_rf2"); err != nil || topics.Has("_schemas_rf2") {
			t.Fatalf("the topic was created anyway: %v %v", topics, err)
		}
	})
	t.Run("TwoInstancesAgree", func(t *testing.T) {
		r1, r2 := start(t, "_schemas_agree"), start(t, "_schemas_agree")
		a1, a2 := newAPI(t, r1), newAPI(t, r2)
		id := a1.register("s", v1)
		caughtUp(t, r2, r2.store)
		a2.want("GET", "/subjects/s/versions/1", nil, 200, fmt.Sprintf(`{"subject":"s","version":1,"id":%d,"schema":%q}`, id, v1))
		// Writes from both instances at once, to one subject.
		a1.want("PUT", "/config/race", map[string]string{"compatibility": "NONE"}, 200, `{"compatibility":"NONE"}`)
		caughtUp(t, r2, r2.store)
		const each = 8
		ids := make(chan int, 2*each)
		var wg sync.WaitGroup
		for n, a := range []api{a1, a2} {
			for i := range each {
				wg.Add(1)
				go func() {
					defer wg.Done()
					schema := record(fmt.Sprintf(`{"name":"f%d_%d","type":"int","default":0}`, n, i))
					status, body := a.do("POST", "/subjects/race/versions", map[string]string{"schema": schema})
					if status != 200 {
						t.Errorf("register: %d %s", status, body)
					}
					var resp registerResponse
					a.ok("POST", "/subjects/race", map[string]string{"schema": schema}, &resp)
					ids <- resp.ID
				}()
			}
		}
		wg.Wait()
		close(ids)
		seen := map[int]bool{}
		for id := range ids {
			if seen[id] {
				t.Fatalf("id %d given twice", id)
			}
			seen[id] = true
		}
		caughtUp(t, r1, r1.store)
		caughtUp(t, r2, r2.store)
		var versions []int
		a2.ok("GET", "/subjects/race/versions", nil, &versions)
		if len(versions) != 2*each || versions[0] != 1 || versions[2*each-1] != 2*each {
			t.Fatalf("versions %v", versions)
		}
		end, err := r1.store.EndOffset(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d records for %d writes: %d lost the race for their offset and were decided again", end, 2+2*each, end-(2+2*each))
		if d1, d2 := dump(a1), dump(a2); d1 != d2 {
			t.Fatalf("views differ:\n%s\n---\n%s", d1, d2)
		}
	})
	t.Run("RestartRebuilds", func(t *testing.T) {
		r := start(t, "_schemas_restart")
		a := newAPI(t, r)
		a.register("s", v1)
		a.register("s", v2)
		a.register("gone", `"int"`)
		a.want("DELETE", "/subjects/s/versions/1", nil, 200, `1`)
		a.want("DELETE", "/subjects/gone", nil, 200, `[1]`)
		a.want("DELETE", "/subjects/gone?permanent=true", nil, 200, `[1]`)
		a.want("PUT", "/config/s", map[string]string{"compatibility": "FULL"}, 200, `{"compatibility":"FULL"}`)
		a.want("PUT", "/mode", map[string]string{"mode": "READONLY"}, 200, `{"mode":"READONLY"}`)
		want := dump(a)
		r.Close()
		if got := dump(newAPI(t, start(t, "_schemas_restart"))); got != want {
			t.Fatalf("restarted view differs:\n%s\n---\n%s", want, got)
		}
	})
	t.Run("IndependentClient", func(t *testing.T) { independentClient(t, b.Addr, start(t, "_schemas_sr"), start(t, "_schemas_sr")) })
}

func admin(t *testing.T, broker string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func ptr[T any](v T) *T { return &v }

type order struct {
	ID     int64   `avro:"id"`
	Amount float64 `avro:"amount"`
	Note   string  `avro:"note"`
}

const (
	orderV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"}]}`
	orderV2 = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"},{"name":"note","type":"string","default":""}]}`
	// orderBad adds a field without a default: not BACKWARD compatible.
	orderBad = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"amount","type":"double"},{"name":"currency","type":"string"}]}`
)

// independentClient drives the registry with franz-go's sr client, which
// was written against Confluent's registry, and moves Avro records framed
// by sr.Serde through the broker: encoded with a schema registered on one
// instance, decoded with the schema fetched by id from the other.
func independentClient(t *testing.T, broker string, r1, r2 *Registry) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl1, err := sr.NewClient(sr.URLs("http://" + r1.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	cl2, err := sr.NewClient(sr.URLs("http://" + r2.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	const subject = "orders-value"
	types, err := cl1.SupportedTypes(ctx)
	slices.Sort(types)
	if err != nil || !slices.Equal(types, []sr.SchemaType{sr.TypeAvro, sr.TypeProtobuf, sr.TypeJSON}) {
		t.Fatalf("types %v %v", types, err)
	}
	s1, err := cl1.CreateSchema(ctx, subject, sr.Schema{Schema: orderV1})
	if err != nil || s1.Version != 1 || s1.Subject != subject {
		t.Fatalf("create v1: %+v %v", s1, err)
	}
	s2, err := cl1.CreateSchema(ctx, subject, sr.Schema{Schema: orderV2})
	if err != nil || s2.Version != 2 || s2.ID == s1.ID {
		t.Fatalf("create v2: %+v %v", s2, err)
	}
	_, err = cl1.CreateSchema(ctx, subject, sr.Schema{Schema: orderBad})
	var re *sr.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict || re.ErrorCode != 409 || !strings.Contains(re.Message, "currency") {
		t.Fatalf("incompatible: %v", err)
	}
	if res, err := cl1.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), subject, -1, sr.Schema{Schema: orderBad}); err != nil || res.Is || len(res.Messages) == 0 {
		t.Fatalf("check compatibility: %+v %v", res, err)
	}
	caughtUp(t, r2, r2.store)
	found, err := cl2.LookupSchema(ctx, subject, sr.Schema{Schema: orderV1})
	if err != nil || found.ID != s1.ID || found.Version != 1 {
		t.Fatalf("lookup on the other instance: %+v %v", found, err)
	}
	subjects, err := cl2.Subjects(ctx)
	if err != nil || len(subjects) != 1 || subjects[0] != subject {
		t.Fatalf("subjects %v %v", subjects, err)
	}
	versions, err := cl2.SubjectVersions(ctx, subject)
	if err != nil || len(versions) != 2 {
		t.Fatalf("versions %v %v", versions, err)
	}
	if got, err := cl2.SchemaByVersion(ctx, subject, -1); err != nil || got.ID != s2.ID || got.Schema.Schema != orderV2 {
		t.Fatalf("latest: %+v %v", got, err)
	}

	// Config and mode.
	if res := cl1.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatFull}, subject); res[0].Err != nil || res[0].Level != sr.CompatFull {
		t.Fatalf("set compatibility: %+v", res)
	}
	if res := cl1.Compatibility(ctx, subject); res[0].Err != nil || res[0].Level != sr.CompatFull {
		t.Fatalf("compatibility: %+v", res)
	}
	if res := cl1.ResetCompatibility(ctx, subject); res[0].Err != nil {
		t.Fatalf("reset compatibility: %+v", res)
	}
	if res := cl1.Compatibility(ctx); res[0].Err != nil || res[0].Level != sr.CompatBackward {
		t.Fatalf("global compatibility: %+v", res)
	}
	if res := cl1.SetMode(ctx, sr.ModeReadOnly, subject); res[0].Err != nil || res[0].Mode != sr.ModeReadOnly {
		t.Fatalf("set mode: %+v", res)
	}
	if _, err := cl1.CreateSchema(ctx, subject, sr.Schema{Schema: `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"}]}`}); !errors.As(err, &re) || re.ErrorCode != 42205 {
		t.Fatalf("register in read-only mode: %v", err)
	}
	if res := cl1.ResetMode(ctx, subject); res[0].Err != nil {
		t.Fatalf("reset mode: %+v", res)
	}
	if res := cl1.Mode(ctx); res[0].Err != nil || res[0].Mode != sr.ModeReadWrite {
		t.Fatalf("mode: %+v", res)
	}

	// Records through the broker: framed with v2's id by one serde,
	// decoded by another that learns the schema by id from r2.
	avroV2, err := hamba.Parse(orderV2)
	if err != nil {
		t.Fatal(err)
	}
	var enc sr.Serde
	enc.Register(s2.ID, order{}, sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(avroV2, v) }))
	producer, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic("orders"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	sent := []order{{1, 9.5, "first"}, {2, 10, ""}, {3, -1.25, "ünïcode"}}
	for _, o := range sent {
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: enc.MustEncode(o)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var dec sr.Serde
	var got []order
	for len(got) < len(sent) {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", len(got), len(sent), err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		for _, rec := range fetches.Records() {
			id, _, err := dec.DecodeID(rec.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !dec.IsRegistered(id, order{}) {
				text, err := cl2.SchemaByID(ctx, id)
				if err != nil {
					t.Fatalf("schema %d from the other instance: %v", id, err)
				}
				fetched, err := hamba.Parse(text.Schema)
				if err != nil {
					t.Fatal(err)
				}
				dec.Register(id, order{}, sr.DecodeFn(func(b []byte, v any) error { return hamba.Unmarshal(fetched, b, v) }))
			}
			var o order
			if err := dec.Decode(rec.Value, &o); err != nil {
				t.Fatal(err)
			}
			got = append(got, o)
		}
	}
	for i := range sent {
		if got[i] != sent[i] {
			t.Fatalf("record %d: sent %+v, decoded %+v", i, sent[i], got[i])
		}
	}

	// Deletes: soft, then permanent.
	if err := cl1.DeleteSchema(ctx, subject, 1, sr.HardDelete); !errors.As(err, &re) || re.ErrorCode != 40407 {
		t.Fatalf("hard delete before soft: %v", err)
	}
	if err := cl1.DeleteSchema(ctx, subject, 1, sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	if err := cl1.DeleteSchema(ctx, subject, 1, sr.HardDelete); err != nil {
		t.Fatal(err)
	}
	if deleted, err := cl1.DeleteSubject(ctx, subject, sr.SoftDelete); err != nil || len(deleted) != 1 || deleted[0] != 2 {
		t.Fatalf("soft-delete subject: %v %v", deleted, err)
	}
	if deleted, err := cl1.DeleteSubject(ctx, subject, sr.HardDelete); err != nil || len(deleted) != 1 {
		t.Fatalf("hard-delete subject: %v %v", deleted, err)
	}
	caughtUp(t, r2, r2.store)
	if _, err := cl2.SchemaByID(ctx, s2.ID); !errors.As(err, &re) || re.ErrorCode != 40403 {
		t.Fatalf("schema after hard delete: %v", err)
	}
	if subjects, err := cl2.Subjects(sr.WithParams(ctx, sr.ShowDeleted)); err != nil || len(subjects) != 0 {
		t.Fatalf("subjects after hard delete: %v %v", subjects, err)
	}
}
