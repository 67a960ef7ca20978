package main

// `strata share-group` against a real in-process broker with a franz-go
// share consumer: list, describe (start offset, log end, lag = records
// not yet acknowledged, the member), delete refused with a member and
// done once it left.

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestShareGroupCommands(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "tasks", "-p", "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "crew"
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	if resp, err := req.RequestWith(ctx, admin); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("group config: %v %v", err, resp)
	}
	for i := 0; i < 6; i++ { // one batch each
		if err := admin.ProduceSync(ctx, &kgo.Record{Topic: "tasks", Value: []byte("task")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("share-cli-test"), kgo.ShareGroup("crew"), kgo.ConsumeTopics("tasks"))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for seen := 0; seen < 6; {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen++
			if r.Offset < 4 {
				r.Ack(kgo.AckAccept)
			} else {
				r.Ack(kgo.AckRelease)
			}
		})
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	if err := consumer.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	if out := cli(t, addr, "", "share-group", "list"); !regexp.MustCompile(`(?m)^crew\s+Stable$`).MatchString(out) {
		t.Fatalf("list:\n%s", out)
	}
	out := cli(t, addr, "", "share-group", "describe", "crew")
	for _, want := range []string{`(?m)^tasks\s+0\s+4\s+6\s+2$`, `share-cli-test`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("describe lacks %s:\n%s", want, out)
		}
	}
	if err := cliErr(t, addr, "", "share-group", "delete", "crew"); err == nil || !regexp.MustCompile(`NON_EMPTY_GROUP`).MatchString(err.Error()) {
		t.Fatalf("delete with a member: %v", err)
	}
	consumer.Close()
	if out := cli(t, addr, "", "share-group", "delete", "crew"); !regexp.MustCompile(`deleted group crew`).MatchString(out) {
		t.Fatalf("delete:\n%s", out)
	}
	if out := cli(t, addr, "", "share-group", "list"); regexp.MustCompile(`crew`).MatchString(out) {
		t.Fatalf("listed after the delete:\n%s", out)
	}
}
