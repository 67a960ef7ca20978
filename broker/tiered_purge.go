package broker

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// purgeTimeout bounds one purge: listing and deleting a topic's objects.
const purgeTimeout = 10 * time.Minute

// purgeResult is the admin API's answer to a purge.
type purgeResult struct {
	Topic          string   `json:"topic"`
	TopicIDs       []string `json:"topic_ids"` // incarnations purged, hex as in the keys
	ObjectsDeleted int      `json:"objects_deleted"`
}

// purgeTopic deletes from the object store every object of the incarnations
// of topic that no longer exist (deleted topics keep their objects so that
// they can be recovered). The live topic of that name, if any, is kept.
func (t *tieredStorage) purgeTopic(ctx context.Context, topic string) (purgeResult, error) {
	res := purgeResult{Topic: topic, TopicIDs: []string{}}
	if err := validateTopicName(topic); err != nil {
		return res, err
	}
	live := ""
	if ts := t.s.topics.get(topic); ts != nil {
		live = fmt.Sprintf("%x", ts.id[:])
	}
	prefix := "v1/" + topic + "-"
	objects, err := t.store.List(ctx, prefix)
	if err != nil {
		return res, err
	}
	byID := map[string][]string{}
	for _, o := range objects {
		id, rest, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/")
		// A longer topic name sharing the prefix ("a" and "a-b") has no
		// 32-hex-digit id right after it.
		if !ok || rest == "" || !isTopicIDHex(id) || id == live {
			continue
		}
		byID[id] = append(byID[id], o.Key)
	}
	for id, keys := range byID {
		for _, k := range keys {
			if err := t.store.Delete(ctx, k); err != nil {
				return res, fmt.Errorf("deleting %s: %w", k, err)
			}
			t.cache.Remove(k)
			res.ObjectsDeleted++
		}
		res.TopicIDs = append(res.TopicIDs, id)
	}
	sort.Strings(res.TopicIDs)
	return res, nil
}

func isTopicIDHex(s string) bool {
	if len(s) != 32 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// mountTieredRoutes adds DELETE /v1/remote/topics/{topic}: purge a deleted
// topic's objects from the object store (strata topic purge).
func (t *tieredStorage) mountTieredRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/v1/remote/topics/{topic}", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			w.Header().Set("Allow", "DELETE")
			writeAdminJSON(w, http.StatusMethodNotAllowed, adminErrorJSON{Error: "method " + r.Method + " not allowed"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), purgeTimeout)
		defer cancel()
		res, err := t.purgeTopic(ctx, r.PathValue("topic"))
		switch {
		case err != nil:
			writeAdminJSON(w, http.StatusInternalServerError, adminErrorJSON{Error: err.Error()})
		case len(res.TopicIDs) == 0:
			writeAdminJSON(w, http.StatusNotFound, adminErrorJSON{Error: fmt.Sprintf("the object store holds nothing of a deleted topic %q", res.Topic)})
		default:
			t.s.logger.Info("deleted topic purged from the object store", "topic", res.Topic, "topic_ids", res.TopicIDs, "objects", res.ObjectsDeleted)
			writeAdminJSON(w, http.StatusOK, res)
		}
	})
}
