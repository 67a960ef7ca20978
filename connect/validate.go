package connect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// commonConfigKeys are the settings the runtime itself reads from every
// connector configuration (Kafka Connect's "Common", "Transforms" and
// "Error Handling" groups, the parts Strata implements).
func commonConfigKeys(pluginType string) []ConfigKey {
	keys := []ConfigKey{
		{Name: "name", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "Globally unique name to use for this connector."},
		{Name: "connector.class", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "Name or alias of the connector class."},
		{Name: "tasks.max", Type: "INT", Default: "1", Importance: "HIGH", Documentation: "Maximum number of tasks to use for this connector."},
		{Name: "key.converter", Type: "CLASS", Importance: "LOW", Documentation: "Converter for record keys (JsonConverter, StringConverter, ByteArrayConverter); default: the worker's."},
		{Name: "value.converter", Type: "CLASS", Importance: "LOW", Documentation: "Converter for record values; default: the worker's."},
		{Name: "errors.retry.timeout", Type: "LONG", Default: "0", Importance: "MEDIUM", Documentation: "Milliseconds to retry a failed operation; -1 retries forever, 0 not at all."},
		{Name: "errors.retry.delay.max.ms", Type: "LONG", Default: "60000", Importance: "MEDIUM", Documentation: "Longest wait between consecutive retries."},
		{Name: "errors.tolerance", Type: "STRING", Default: "none", Importance: "MEDIUM", Documentation: "none: a failed record fails the task; all: failed records are skipped."},
		{Name: "errors.log.enable", Type: "BOOLEAN", Default: "false", Importance: "MEDIUM", Documentation: "Log each tolerated failure."},
	}
	if pluginType == "sink" {
		keys = append(keys,
			ConfigKey{Name: "topics", Type: "LIST", Importance: "HIGH", Documentation: "Topics to consume; set this or topics.regex."},
			ConfigKey{Name: "topics.regex", Type: "STRING", Importance: "HIGH", Documentation: "Regular expression of topics to consume."},
			ConfigKey{Name: "errors.deadletterqueue.topic.name", Type: "STRING", Importance: "MEDIUM", Documentation: "Topic for records that failed with errors.tolerance=all."},
			ConfigKey{Name: "errors.deadletterqueue.context.headers.enable", Type: "BOOLEAN", Default: "false", Importance: "MEDIUM", Documentation: "Add __connect.errors.* headers naming the failure to dead-letter records."},
		)
	}
	return keys
}

// validationResult is the outcome of validating a connector configuration:
// every known setting with its errors.
type validationResult struct {
	plugin *Plugin
	keys   []ConfigKey         // common keys, then the connector's
	groups map[string]string   // key name → group
	errors map[string][]string // key name → messages
	values map[string]string   // as given
}

func (v *validationResult) errorCount() int {
	n := 0
	for _, errs := range v.errors {
		n += len(errs)
	}
	return n
}

// messages lists every error as "name: message", in key order.
func (v *validationResult) messages() []string {
	var out []string
	for _, name := range sortedMapKeys(v.errors) {
		for _, m := range v.errors[name] {
			out = append(out, name+": "+m)
		}
	}
	return out
}

// validateConnectorConfig checks a configuration: the runtime's common
// settings and the connector's own Validate.
func validateConnectorConfig(cfg Config) *validationResult {
	v := &validationResult{groups: map[string]string{}, errors: map[string][]string{}, values: map[string]string(cfg)}
	add := func(name, msg string) { v.errors[name] = append(v.errors[name], msg) }
	class := strings.TrimSpace(cfg["connector.class"])
	pluginType := ""
	if class == "" {
		add("connector.class", "Missing required configuration \"connector.class\" which has no default value.")
	} else if p, ok := LookupPlugin(class); ok {
		v.plugin = p
		pluginType = p.Type
	} else {
		add("connector.class", fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s", class))
	}
	for _, k := range commonConfigKeys(pluginType) {
		v.keys = append(v.keys, k)
		v.groups[k.Name] = "Common"
	}
	if strings.TrimSpace(cfg["name"]) == "" {
		add("name", "Missing required configuration \"name\" which has no default value.")
	}
	if t := cfg["tasks.max"]; t != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(t)); err != nil || n < 1 {
			add("tasks.max", fmt.Sprintf("Invalid value %s for configuration tasks.max: must be an integer of at least 1", t))
		}
	}
	for _, which := range []string{"key", "value"} {
		if class, ok := cfg[which+".converter"]; ok {
			if _, err := converterFor(which, nil, cfg); err != nil {
				add(which+".converter", fmt.Sprintf("Invalid value %s for configuration %s.converter: %v", class, which, err))
			}
		}
	}
	_, perrs := parseErrorPolicy(cfg)
	for _, e := range perrs {
		add(e.Name, e.Message)
	}
	if pluginType == "sink" {
		if _, _, err := sinkTopics(cfg); err != nil {
			if ce, ok := err.(*ConfigError); ok {
				add(ce.Name, ce.Message)
			}
		}
	}
	if v.plugin != nil {
		conn := v.plugin.New()
		seen := map[string]bool{}
		for _, k := range v.keys {
			seen[k.Name] = true
		}
		for _, k := range conn.ConfigKeys() {
			if seen[k.Name] {
				continue
			}
			seen[k.Name] = true
			v.keys = append(v.keys, k)
			v.groups[k.Name] = "Connector"
		}
		for _, e := range conn.Validate(cfg) {
			add(e.Name, e.Message)
			if !seen[e.Name] {
				seen[e.Name] = true
				v.keys = append(v.keys, ConfigKey{Name: e.Name, Type: "STRING"})
				v.groups[e.Name] = "Connector"
			}
		}
	}
	for name := range v.errors {
		sort.Strings(v.errors[name])
	}
	return v
}
