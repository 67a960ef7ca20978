package main

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRecordFormat(t *testing.T) {
	rec := &kgo.Record{
		Topic:     "orders",
		Partition: 2,
		Offset:    41,
		Timestamp: time.UnixMilli(1700000000123),
		Key:       []byte("k1"),
		Value:     []byte("hello"),
		Headers:   []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("")}},
	}
	nullRec := &kgo.Record{Topic: "t", Partition: 0, Offset: 0, Timestamp: time.UnixMilli(5)}
	emptyRec := &kgo.Record{Key: []byte{}, Value: []byte{}}

	tests := []struct {
		name   string
		format string
		rec    *kgo.Record
		want   string
	}{
		{"default", `%v\n`, rec, "hello\n"},
		{"kcat style", `%t/%p@%o %k=%v`, rec, "orders/2@41 k1=hello"},
		{"timestamp", `%T`, rec, "1700000000123"},
		{"lengths", `%K %S`, rec, "2 5"},
		{"headers", `[%h]`, rec, "[a=1,b=]"},
		{"escapes", `%v\t%k\r\n\\`, rec, "hello\tk1\r\n\\"},
		{"percent", `100%% %v`, rec, "100% hello"},
		{"literal only", `x`, rec, "x"},
		{"empty template", ``, rec, ""},
		{"null key and value", `[%k][%v] %K %S [%h]`, nullRec, "[][] -1 -1 []"},
		{"empty key and value", `%K %S`, emptyRec, "0 0"},
		{"unicode literal", `→ %v`, rec, "→ hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseRecordFormat(tt.format)
			if err != nil {
				t.Fatalf("parseRecordFormat(%q): %v", tt.format, err)
			}
			if got := string(f.appendRecord(nil, tt.rec)); got != tt.want {
				t.Errorf("format %q = %q, want %q", tt.format, got, tt.want)
			}
		})
	}
}

func TestRecordFormatErrors(t *testing.T) {
	for _, format := range []string{`%x`, `%`, `abc\`, `\q`, `%v %z`} {
		if _, err := parseRecordFormat(format); err == nil {
			t.Errorf("parseRecordFormat(%q): no error", format)
		}
	}
}

func TestStartOffset(t *testing.T) {
	tests := []struct {
		offset        string
		fromBeginning bool
		want          kgo.Offset
		exact         bool
		wantErr       bool
	}{
		{offset: "", want: kgo.NewOffset().AtEnd()},
		{offset: "latest", want: kgo.NewOffset().AtEnd()},
		{offset: "earliest", want: kgo.NewOffset().AtStart()},
		{offset: "", fromBeginning: true, want: kgo.NewOffset().AtStart()},
		{offset: "earliest", fromBeginning: true, want: kgo.NewOffset().AtStart()},
		{offset: "42", want: kgo.NewOffset().At(42), exact: true},
		{offset: "-10", want: kgo.NewOffset().AtEnd().Relative(-10), exact: true},
		{offset: "latest", fromBeginning: true, wantErr: true},
		{offset: "soon", wantErr: true},
	}
	for _, tt := range tests {
		got, exact, err := startOffset(tt.offset, tt.fromBeginning)
		if (err != nil) != tt.wantErr {
			t.Errorf("startOffset(%q, %v) error = %v, wantErr %v", tt.offset, tt.fromBeginning, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if got.String() != tt.want.String() || exact != tt.exact {
			t.Errorf("startOffset(%q, %v) = %s exact=%v, want %s exact=%v",
				tt.offset, tt.fromBeginning, got, exact, tt.want, tt.exact)
		}
	}
}

func TestConsumeOptionConflicts(t *testing.T) {
	bad := []consumeOptions{
		{group: "g", partition: 1},
		{group: "g", partition: -1, offset: "5"},
		{partition: -1, maxMessages: -1},
		{partition: -1, offset: "latest", fromBeginning: true},
	}
	for _, opts := range bad {
		if _, err := consumeClientOpts("t", opts, nil); err == nil {
			t.Errorf("consumeClientOpts(%+v): no error", opts)
		}
	}
	good := []consumeOptions{
		{partition: -1},
		{partition: 3, offset: "7"},
		{group: "g", partition: -1, offset: "earliest"},
	}
	for _, opts := range good {
		if _, err := consumeClientOpts("t", opts, nil); err != nil {
			t.Errorf("consumeClientOpts(%+v): %v", opts, err)
		}
	}
}

func TestSplitKeyValue(t *testing.T) {
	tests := []struct {
		line, sep  string
		key, value string
		nullKey    bool
	}{
		{line: "plain", sep: "", value: "plain", nullKey: true},
		{line: "k:v", sep: ":", key: "k", value: "v"},
		{line: "k:v:w", sep: ":", key: "k", value: "v:w"},
		{line: "novalue", sep: ":", value: "novalue", nullKey: true},
		{line: ":v", sep: ":", key: "", value: "v"},
		{line: "k::v", sep: "::", key: "k", value: "v"},
	}
	for _, tt := range tests {
		k, v := splitKeyValue([]byte(tt.line), tt.sep)
		if (k == nil) != tt.nullKey || string(k) != tt.key || string(v) != tt.value {
			t.Errorf("splitKeyValue(%q, %q) = %q (nil %v), %q", tt.line, tt.sep, k, k == nil, v)
		}
	}
}

func TestParseAcksAndCompression(t *testing.T) {
	acks := map[string]kgo.Acks{"all": kgo.AllISRAcks(), "-1": kgo.AllISRAcks(), "1": kgo.LeaderAck(), "0": kgo.NoAck(), "ALL": kgo.AllISRAcks()}
	for in, want := range acks {
		got, err := parseAcks(in)
		if err != nil || got != want {
			t.Errorf("parseAcks(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := parseAcks("2"); err == nil {
		t.Error("parseAcks(2): no error")
	}
	for _, name := range []string{"none", "gzip", "snappy", "lz4", "zstd", "", "ZSTD"} {
		if _, err := parseCompression(name); err != nil {
			t.Errorf("parseCompression(%q): %v", name, err)
		}
	}
	if _, err := parseCompression("brotli"); err == nil {
		t.Error("parseCompression(brotli): no error")
	}
	if _, err := produceClientOpts(produceOptions{compression: "none", acks: "1", partition: 2}); err != nil {
		t.Errorf("produceClientOpts: %v", err)
	}
}
