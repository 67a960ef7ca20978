package jdbc

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-streaming/strata/connect"
	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/registry/serde"
)

// TestRuntimeAvroRoundTripEvolution: a PostgreSQL table → jdbc-source with
// Confluent's AvroConverter for keys and values → a topic → jdbc-sink
// (AvroConverter, upsert, auto.create, auto.evolve) → another table, in one
// in-process worker, against a real `strata server` whose built-in schema
// registry (schema.registry.enable=true) holds the schemas. numeric, date
// and timestamptz columns arrive equal. Then a nullable column is added
// while everything runs: the source's value schema evolves, version 2 is
// registered under the registry's default BACKWARD level, the sink adds
// the column, and rows written after the change carry it.
func TestRuntimeAvroRoundTripEvolution(t *testing.T) {
	dsn, db := pgDatabase(t)
	mustExec(t, db, `CREATE TABLE asrc (id bigserial PRIMARY KEY, name text, amount numeric(12,3), day date,
		at timestamptz, n int NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`)
	mustExec(t, db, `INSERT INTO asrc (name, amount, day, at, n)
		SELECT 'name ' || g, g * -1.125, date '1969-12-25' + g,
			timestamptz '2024-11-03 05:00:00+00' + g * interval '7 minutes 1.5 seconds', g
		FROM generate_series(1, 150) g`)
	mustExec(t, db, `INSERT INTO asrc DEFAULT VALUES`) // a row of NULLs

	registryAddr := brokertest.FreeAddr(t)
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0", "--set", "group.min.session.timeout.ms=500",
		"--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+registryAddr)
	registryURL := "http://" + registryAddr
	client, err := serde.NewClient(registryURL, serde.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rtWaitFor(t, 30*time.Second, "the schema registry in strata server", func() (bool, string) {
		_, err := client.Subjects(ctx, "", false)
		return err == nil, errString(err)
	})

	const topic = "av_asrc"
	rtCreateTopic(t, b.Addr, topic, 2)
	_, base := rtStartWorker(t, rtWorkerProps(b.Addr, "rt-avro"))
	avro := map[string]string{
		"key.converter": connect.AvroConverterClass, "key.converter.schema.registry.url": registryURL,
		"value.converter": connect.AvroConverterClass, "value.converter.schema.registry.url": registryURL,
	}
	withAvro := func(cfg map[string]string) map[string]string {
		for k, v := range avro {
			cfg[k] = v
		}
		return cfg
	}
	rtCreateConnector(t, base, "source", withAvro(map[string]string{
		"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "connection.url": dsn,
		"mode": modeTimestampIncrementing, "table.whitelist": "asrc", "topic.prefix": "av_",
		"incrementing.column.name": "id", "timestamp.column.name": "updated_at",
		"poll.interval.ms": "20", "batch.max.rows": "64",
	}))
	rtCreateConnector(t, base, "sink", withAvro(map[string]string{
		"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "connection.url": dsn, "topics": topic,
		"insert.mode": "upsert", "pk.mode": "record_key", "auto.create": "true", "auto.evolve": "true",
		"table.name.format": "copy_${topic}", "batch.size": "50",
	}))
	rtLogOnFailure(t, "source", &base)
	rtLogOnFailure(t, "sink", &base)
	rtWaitRunning(t, base, "source", "")
	rtWaitRunning(t, base, "sink", "")

	// Timestamps travel as milliseconds (timestamp-millis); the sink
	// writes them to timestamp columns in UTC.
	// The sink creates an unconstrained numeric column: compare values,
	// not their printed scale.
	srcCols := []string{"id", "name", "trim_scale(amount)", "day", "date_trunc('milliseconds', at AT TIME ZONE 'UTC')", "n",
		"date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC')"}
	copyCols := []string{"id", "name", "trim_scale(amount)", "day", "at", "n", "updated_at"}
	equal := func(stage string, src, dst []string) {
		t.Helper()
		rtWaitFor(t, 30*time.Second, "the copy equal to the source "+stage, func() (bool, string) {
			return rtSame(rtDump(t, db, "asrc", src), rtDump(t, db, "copy_"+topic, dst))
		})
	}
	equal("after the initial copy", srcCols, copyCols)

	versions := func(subject string) []int {
		t.Helper()
		v, err := client.Versions(ctx, subject, false)
		if err != nil {
			t.Fatalf("versions of %s: %v", subject, err)
		}
		return v
	}
	if v := versions(topic + "-value"); !reflect.DeepEqual(v, []int{1}) {
		t.Fatalf("%s-value versions %v, want [1]", topic, v)
	}
	if v := versions(topic + "-key"); !reflect.DeepEqual(v, []int{1}) {
		t.Fatalf("%s-key versions %v, want [1]", topic, v)
	}
	v1, err := client.Version(ctx, topic+"-value", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"asrc"`, `"logicalType":"decimal"`, `"scale":3`, `"logicalType":"date"`, `"logicalType":"timestamp-millis"`} {
		if !strings.Contains(v1.Text, want) {
			t.Errorf("version 1 lacks %s: %s", want, v1.Text)
		}
	}

	// The schema evolves mid-stream: a nullable column, new rows carrying
	// it, old rows updated to carry it.
	mustExec(t, db, `ALTER TABLE asrc ADD COLUMN note text`)
	mustExec(t, db, `INSERT INTO asrc (name, amount, day, at, n, note)
		SELECT 'late ' || g, g + 0.5, date '2030-01-01' + g, now(), g, 'note ' || g FROM generate_series(1, 40) g`)
	mustExec(t, db, `UPDATE asrc SET note = 'updated', n = n + 1, updated_at = clock_timestamp() WHERE id % 10 = 0`)
	equal("after the new column", append(srcCols, "note"), append(copyCols, "note"))
	if n := count(t, db, `SELECT count(*) FROM copy_av_asrc WHERE id > 151 AND note IS NOT NULL`); n != 40 {
		t.Fatalf("%d copied rows inserted after ADD COLUMN carry a note, want 40", n)
	}
	if v := versions(topic + "-value"); !reflect.DeepEqual(v, []int{1, 2}) {
		t.Fatalf("%s-value versions %v after ADD COLUMN, want [1 2]", topic, v)
	}
	if v := versions(topic + "-key"); !reflect.DeepEqual(v, []int{1}) {
		t.Fatalf("%s-key versions %v, want [1]", topic, v)
	}
	v2, err := client.Version(ctx, topic+"-value", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v2.Text, `{"name":"note","type":["null","string"],"default":null}`) {
		t.Fatalf("version 2 has no optional note: %s", v2.Text)
	}
	level, err := client.Config(ctx, topic+"-value")
	if err != nil {
		t.Fatal(err)
	}
	ok, reasons, err := client.CheckCompatibility(ctx, topic+"-value", 1, v2.AsText())
	if err != nil || !ok {
		t.Fatalf("version 2 against version 1 under %s: %v %v", level, reasons, err)
	}
	t.Logf("%d rows copied through Avro; %s-value v1 id %d, v2 id %d (%s)", count(t, db, `SELECT count(*) FROM asrc`),
		topic, v1.ID, v2.ID, level)
	code, _ := rtREST(t, "GET", base+"/connectors/sink/status", nil)
	if code != http.StatusOK {
		t.Fatalf("sink status %d", code)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
