package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// alterConfigsJSON is PATCH /api/v1/topics/{topic}/configs: configs to set
// and configs to delete (back to the default), with validateOnly to ask
// the cluster whether it would accept them without changing anything.
type alterConfigsJSON struct {
	Set          map[string]string `json:"set"`
	Delete       []string          `json:"delete"`
	ValidateOnly bool              `json:"validateOnly"`
}

type alteredConfigsJSON struct {
	Topic        string   `json:"topic"`
	ValidateOnly bool     `json:"validateOnly"`
	Changed      []string `json:"changed"` // the configs set or deleted, by name
}

// configErrorJSON is the cluster's refusal of one config.
type configErrorJSON struct {
	Name  string `json:"name"`
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

// configErrorsJSON is a refused change: the error of the whole change and
// the error of each config the cluster refuses on its own.
type configErrorsJSON struct {
	Error        string            `json:"error"`
	Code         string            `json:"code,omitempty"`
	ConfigErrors []configErrorJSON `json:"configErrors"`
}

// alterTopicConfigs: PATCH /api/v1/topics/{topic}/configs. The change
// goes to the cluster as one IncrementalAlterConfigs (SET and DELETE),
// validate-only when asked. When the cluster refuses it with a Kafka
// error, each config is validated alone so the answer (400, configErrors)
// names the configs that are wrong.
func (c *Console) alterTopicConfigs(ctx context.Context, w http.ResponseWriter, r *http.Request, cl *kgo.Client) {
	topic := r.PathValue("topic")
	var req alterConfigsJSON
	if !decodeBody(w, r, &req) {
		return
	}
	alter := make([]kadm.AlterConfig, 0, len(req.Set)+len(req.Delete))
	for name, value := range req.Set {
		alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: &value})
	}
	for _, name := range req.Delete {
		if _, both := req.Set[name]; both {
			writeError(w, http.StatusBadRequest, kerr.InvalidRequest.Message, "config %q is both set and deleted", name)
			return
		}
		alter = append(alter, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: name})
	}
	if len(alter) == 0 {
		writeError(w, http.StatusBadRequest, "", "nothing to change: give set or delete")
		return
	}
	for _, a := range alter {
		if a.Name == "" {
			writeError(w, http.StatusBadRequest, kerr.InvalidConfig.Message, "a config name is required")
			return
		}
	}
	sort.Slice(alter, func(i, j int) bool { return alter[i].Name < alter[j].Name })
	adm := kadm.NewClient(cl)
	if _, err := describeTopic(ctx, adm, topic); err != nil {
		c.writeKafkaError(w, fmt.Sprintf("altering the configs of %q", topic), err)
		return
	}
	err := alterConfigs(ctx, adm, topic, alter, req.ValidateOnly)
	var ke *kerr.Error
	if errors.As(err, &ke) {
		out := configErrorsJSON{Error: fmt.Sprintf("altering the configs of %q: %s", topic, ke.Description), Code: ke.Message, ConfigErrors: []configErrorJSON{}}
		for _, a := range alter {
			var one *kerr.Error
			if errors.As(alterConfigs(ctx, adm, topic, []kadm.AlterConfig{a}, true), &one) {
				out.ConfigErrors = append(out.ConfigErrors, configErrorJSON{Name: a.Name, Error: one.Description, Code: one.Message})
			}
		}
		writeJSON(w, kafkaStatus(ke), out)
		return
	}
	if err != nil {
		c.writeKafkaError(w, fmt.Sprintf("altering the configs of %q", topic), err)
		return
	}
	out := alteredConfigsJSON{Topic: topic, ValidateOnly: req.ValidateOnly, Changed: []string{}}
	for _, a := range alter {
		out.Changed = append(out.Changed, a.Name)
	}
	writeJSON(w, http.StatusOK, out)
}

// alterConfigs sends one IncrementalAlterConfigs for topic; a refusal is
// its Kafka error with the broker's message as the description.
func alterConfigs(ctx context.Context, adm *kadm.Client, topic string, alter []kadm.AlterConfig, validateOnly bool) error {
	send := adm.AlterTopicConfigs
	if validateOnly {
		send = adm.ValidateAlterTopicConfigs
	}
	resps, err := send(ctx, alter, topic)
	if err != nil {
		return err
	}
	resp, err := resps.On(topic, nil)
	if err != nil {
		return err
	}
	return withMessage(resp.Err, resp.ErrMessage)
}
