package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConsoleClusterBrowser drives the cluster page of a real three-node
// cluster (three `strata server` processes) in headless Chromium: it shows
// the three nodes and the quorum with the raft leader a Kafka client
// finds with DescribeQuorum; a node killed shows as fenced and the
// under-replicated count of a replication-factor-3 topic rises, its list
// naming the topic; the console served by a node that is not the
// controller shows the same.
func TestConsoleClusterBrowser(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := newClient(t, c.Nodes[0].Addr, kgo.SeedBrokers(c.Addrs()...))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 6, 3, nil, "spread"); err != nil {
		t.Fatal(err)
	}
	leader := quorumLeader(t, ctx, cl)
	victim, other := int32(-1), int32(-1)
	for _, id := range otherNodes(leader) {
		if victim < 0 {
			victim = id
		} else {
			other = id
		}
	}
	t.Logf("raft leader %d, killing %d, then the console of %d", leader, victim, other)

	br := openConsoleBrowser(t, ctx)
	consoleOf := func(id int32) string { return "http://" + c.Node(id).HTTPAddr }
	nodeRow := func(id int32) string {
		return fmt.Sprintf(`//table[@id="cluster-nodes"]/tbody/tr[td[1][starts-with(normalize-space(.),"%d")]]`, id)
	}
	underReplicated := `//a[contains(@class,"stat")][span[@class="stat-label"][.="Under-replicated"]]/span[@class="stat-value"]`

	// Healthy: three nodes, each broker and controller and alive; three
	// voters; the leader the client found; nothing under-replicated once
	// the followers caught up.
	br.page(consoleOf(leader), "cluster-three-nodes", "#/",
		fmt.Sprintf(`//p[@id="quorum-summary"][contains(.,"Raft leader node %d ")]`, leader),
		`//table[@id="quorum-voters"]/tbody/tr[3]`,
		nodeRow(1)+`//span[.="alive"]`, nodeRow(2)+`//span[.="alive"]`, nodeRow(3)+`//span[.="alive"]`,
		nodeRow(leader)+`//span[.="active controller"]`)
	waitVisibleFor(t, br.tab, failoverWait, underReplicated+`[.="0"]`)
	if n := countRows(t, br.tab, "#cluster-nodes"); n != 3 {
		t.Fatalf("%d node rows, want 3", n)
	}
	screenshot(t, br.tab, br.artifacts, "cluster-three-nodes")

	// A node killed: fenced, and its replicas out of the ISRs.
	c.Kill(victim)
	waitVisibleFor(t, br.tab, failoverWait, nodeRow(victim)+`//span[.="fenced"]`)
	waitVisibleFor(t, br.tab, failoverWait, underReplicated+`[number(.) > 0]`)
	screenshot(t, br.tab, br.artifacts, "cluster-node-down")
	br.clean("cluster page after the kill")
	br.page(consoleOf(leader), "under-replicated", "#/cluster/partitions/under-replicated",
		`//table[@id="problem-partitions"]//a[.="spread"]`)

	// The console of a node that is not the controller: the same cluster.
	br.page(consoleOf(other), "cluster-other-node", "#/",
		fmt.Sprintf(`//p[@id="quorum-summary"][contains(.,"Raft leader node %d ")]`, leader),
		nodeRow(victim)+`//span[.="fenced"]`, nodeRow(other)+`//span[.="this console"]`,
		nodeRow(leader)+`//span[.="active controller"]`, underReplicated+`[number(.) > 0]`)
	if n := countRows(t, br.tab, "#cluster-nodes"); n != 3 {
		t.Fatalf("%d node rows on node %d's console, want 3", n, other)
	}
}

// quorumLeader asks the cluster for the metadata quorum's leader.
func quorumLeader(t *testing.T, ctx context.Context, cl interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}) int32 {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 || dq.Topics[0].Partitions[0].LeaderID < 1 {
		t.Fatalf("DescribeQuorum: %+v", dq)
	}
	return dq.Topics[0].Partitions[0].LeaderID
}

// waitVisibleFor waits up to d for xpath on the current page (which polls
// the API every 5 s).
func waitVisibleFor(t *testing.T, tab context.Context, d time.Duration, xpath string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, d)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(xpath)); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Text("body"))
		t.Fatalf("waiting for %s: %v; page text: %.900s", xpath, err, text)
	}
}

// countRows counts the body rows of the table selector names.
func countRows(t *testing.T, tab context.Context, selector string) int {
	t.Helper()
	n, err := chromedp.Run(tab, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, selector+" tbody tr")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
