package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTransactionsKcatReadCommitted: a franz-go transactional producer
// commits and aborts against the real binary; kcat (librdkafka) with
// isolation.level=read_committed sees only the committed records, in order,
// and with read_uncommitted sees the aborted ones too.
func TestTransactionsKcatReadCommitted(t *testing.T) {
	t.Parallel()
	kcat := requireTool(t, "kcat", kcatInstall)
	srv := startServer(t)
	createTopic(t, srv.addr, "txn-kcat", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod := newClient(t, srv.addr, kgo.TransactionalID("e2e-txn"), kgo.DefaultProduceTopic("txn-kcat"))
	for _, txn := range []struct {
		values []string
		commit bool
	}{{[]string{"c1", "c2"}, true}, {[]string{"a1", "a2"}, false}, {[]string{"c3"}, true}} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range txn.values {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(txn.commit)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(isolation string) string {
		res := mustRun(t, 30*time.Second, "", kcat, "-C", "-b", srv.addr, "-t", "txn-kcat", "-o", "beginning", "-e", "-q",
			"-X", "isolation.level="+isolation, "-f", "%s\n")
		return strings.TrimSpace(res.stdout)
	}
	if got := read("read_committed"); got != "c1\nc2\nc3" {
		t.Fatalf("kcat read_committed: %q, want c1 c2 c3", got)
	}
	if got := read("read_uncommitted"); got != "c1\nc2\na1\na2\nc3" {
		t.Fatalf("kcat read_uncommitted: %q", got)
	}
}
